//! stage fragment
//! import vec3 N, vec3 albedo, vec3 radiance
//! export vec3 radiance
// Adds the directional lights of the draw's scene: LIGHTS_DIRECTIONAL of them (a bucketed count,
// so the array length is part of the generated text), set 3, binding 0.

struct DirectionalLight
{
    vec4 position;   // xyz world space
    vec4 direction;  // xyz direction the light travels
    vec4 color;      // rgb linear, times intensity
    vec4 cone;       // x cos(inner), y cos(outer)
};

layout(std140, set = 3, binding = 0) uniform DirectionalLights
{
    DirectionalLight lights[LIGHTS_DIRECTIONAL];
} directionalLights;

void run(in vec3 N, in vec3 albedo, inout vec3 radiance)
{
    for (int i = 0; i < LIGHTS_DIRECTIONAL; ++i)
    {
        DirectionalLight light = directionalLights.lights[i];
        vec3 L = -normalize(light.direction.xyz);
        radiance += albedo * light.color.rgb * max(dot(N, L), 0.0);
    }
}
