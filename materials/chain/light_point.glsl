//! stage fragment
//! import vec3 N, vec3 albedo, vec3 worldPosition, vec3 radiance
//! export vec3 radiance
// Adds the point lights of the draw's scene: LIGHTS_POINT of them (a bucketed count,
// so the array length is part of the generated text), set 3, binding 1.

struct PointLight
{
    vec4 position;   // xyz world space
    vec4 direction;  // xyz direction the light travels
    vec4 color;      // rgb linear, times intensity
    vec4 cone;       // x cos(inner), y cos(outer)
};

#ifdef GL_ES
layout(std140) uniform PointLights
#else
layout(std140, set = 3, binding = 1) uniform PointLights
#endif
{
    PointLight lights[LIGHTS_POINT];
} pointLights;

void run(in vec3 N, in vec3 albedo, in vec3 worldPosition, inout vec3 radiance)
{
    for (int i = 0; i < LIGHTS_POINT; ++i)
    {
#ifdef PIPELINE_TARGET_WEBGPU  // member by member: naga cannot translate a block struct's copy (OpCopyLogical)
        PointLight light = PointLight(pointLights.lights[i].position, pointLights.lights[i].direction,
                                      pointLights.lights[i].color, pointLights.lights[i].cone);
#else
        PointLight light = pointLights.lights[i];
#endif
        vec3 toLight = light.position.xyz - worldPosition;
        float falloff = 1.0 / max(dot(toLight, toLight), 1e-4);
        radiance += albedo * light.color.rgb * falloff * max(dot(N, normalize(toLight)), 0.0);
    }
}
