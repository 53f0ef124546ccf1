//! stage fragment
//! import vec3 N, vec3 albedo, vec3 worldPosition, vec3 radiance
//! export vec3 radiance
// Adds the spot lights of the draw's scene: LIGHTS_SPOT of them (a bucketed count,
// so the array length is part of the generated text), set 3, binding 2.

struct SpotLight
{
    vec4 position;   // xyz world space
    vec4 direction;  // xyz direction the light travels
    vec4 color;      // rgb linear, times intensity
    vec4 cone;       // x cos(inner), y cos(outer)
};

#ifdef GL_ES
layout(std140) uniform SpotLights
#else
layout(std140, set = 3, binding = 2) uniform SpotLights
#endif
{
    SpotLight lights[LIGHTS_SPOT];
} spotLights;

void run(in vec3 N, in vec3 albedo, in vec3 worldPosition, inout vec3 radiance)
{
    for (int i = 0; i < LIGHTS_SPOT; ++i)
    {
#ifdef PIPELINE_TARGET_WEBGPU  // member by member: naga cannot translate a block struct's copy (OpCopyLogical)
        SpotLight light = SpotLight(spotLights.lights[i].position, spotLights.lights[i].direction,
                                    spotLights.lights[i].color, spotLights.lights[i].cone);
#else
        SpotLight light = spotLights.lights[i];
#endif
        vec3 toLight = light.position.xyz - worldPosition;
        vec3 L = normalize(toLight);
        float cone = smoothstep(light.cone.y, light.cone.x, dot(-L, normalize(light.direction.xyz)));
        float falloff = cone / max(dot(toLight, toLight), 1e-4);
        radiance += albedo * light.color.rgb * falloff * max(dot(N, L), 0.0);
    }
}
