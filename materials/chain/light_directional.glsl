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

#ifdef GL_ES
layout(std140) uniform DirectionalLights
#else
layout(std140, set = 3, binding = 0) uniform DirectionalLights
#endif
{
    DirectionalLight lights[LIGHTS_DIRECTIONAL];
} directionalLights;

void run(in vec3 N, in vec3 albedo, inout vec3 radiance)
{
    for (int i = 0; i < LIGHTS_DIRECTIONAL; ++i)
    {
#ifdef PIPELINE_TARGET_WEBGPU  // member by member: naga cannot translate a block struct's copy (OpCopyLogical)
        DirectionalLight light = DirectionalLight(directionalLights.lights[i].position, directionalLights.lights[i].direction,
                                                  directionalLights.lights[i].color, directionalLights.lights[i].cone);
#else
        DirectionalLight light = directionalLights.lights[i];
#endif
        vec3 L = -normalize(light.direction.xyz);
        radiance += albedo * light.color.rgb * max(dot(N, L), 0.0);
    }
}
