//! stage fragment
//! import vec3 radiance, float alpha
// Writes the shaded colour (location 0).  A sink.

layout(location = 0) out vec4 outColor;

void run(in vec3 radiance, in float alpha)
{
    outColor = vec4(radiance, alpha);
}
