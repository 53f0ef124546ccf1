//! stage fragment
//! export vec3 albedo, float alpha
// The material's constant colour (set 1, binding 0).

#ifdef GL_ES
layout(std140) uniform SurfaceBlock
#else
layout(std140, set = 1, binding = 0) uniform SurfaceBlock
#endif
{
    vec4 baseColorFactor;
} surface;

void run(out vec3 albedo, out float alpha)
{
    albedo = surface.baseColorFactor.rgb;
    alpha = surface.baseColorFactor.a;
}
