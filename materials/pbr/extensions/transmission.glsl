// extensions/transmission.glsl - KHR_materials_transmission (+ KHR_materials_volume):
// light through the surface. Ambient: the opaque scene color behind the
// surface, sampled in screen space at the refracted exit point (set 0, binding 4,
// a mipmapped copy of the opaque pass), blurred by roughness. Punctual lights:
// a GGX lobe around the light mirrored to the viewer's side. With VOLUME the
// refracted path travels `thickness` (times the node scale) and is absorbed
// with Beer-Lambert attenuation; without it the surface is thin-walled.
#ifndef PBR_EXT_TRANSMISSION_GLSL
#define PBR_EXT_TRANSMISSION_GLSL

#include "../surface.glsl"
#include "../object.glsl"

// Declared in every permutation (one descriptor set layout for the family).
#if defined(PIPELINE_TARGET_WEBGPU)
// WebGPU has no combined image samplers: a texture at binding b, its sampler at b + 32,
// and the name makes the pair where it is sampled.
layout(set = 0, binding = 4) uniform texture2D transmissionFramebuffer_t;
layout(set = 0, binding = 36) uniform sampler transmissionFramebuffer_s;
#define transmissionFramebuffer sampler2D(transmissionFramebuffer_t, transmissionFramebuffer_s)
#elif defined(GL_ES)
uniform sampler2D transmissionFramebuffer;
#else
layout(set = 0, binding = 4) uniform sampler2D transmissionFramebuffer;
#endif

#if !defined(VOLUME) || VOLUME
void loadVolume(inout Surface s)
{
    float thickness = material.thicknessFactor;
    if (slotUsed(SLOT_THICKNESS))
        thickness *= sampleSlot(thicknessTexture, SLOT_THICKNESS).g;
    // Thickness is given in the mesh's local space.
    vec3 scale = vec3(length(object.model[0].xyz), length(object.model[1].xyz), length(object.model[2].xyz));
    s.thickness = max(thickness, 0.0) * (scale.x + scale.y + scale.z) / 3.0;
    s.attenuationColor = material.attenuationColor;
    s.attenuationDistance = material.attenuationDistance;
}
#endif // VOLUME

// Only TRANSMISSION code calls what follows: gone when TRANSMISSION is statically 0.
#if !defined(TRANSMISSION) || TRANSMISSION
void loadTransmission(inout Surface s)
{
    s.transmission = material.transmissionFactor;
    if (slotUsed(SLOT_TRANSMISSION))
        s.transmission *= sampleSlot(transmissionTexture, SLOT_TRANSMISSION).r;
    s.transmission = clamp(s.transmission, 0.0, 1.0);
}

// Beer-Lambert: T = exp(-sigma d), sigma = -ln(attenuationColor) / attenuationDistance.
vec3 volumeAttenuation(Surface s, float distance)
{
    if (s.attenuationDistance <= 0.0 || distance <= 0.0)
        return vec3(1.0);
    return pow(max(s.attenuationColor, vec3(1e-6)), vec3(distance / s.attenuationDistance));
}

// Rougher transmission for higher IOR (a thin slab of ior 1 does not blur).
float transmissionRoughness(float roughness, float ior)
{
    return roughness * clamp(ior * 2.0 - 2.0, 0.0, 1.0);
}

// Transmitted radiance of one punctual light (times the cosine at the mirrored direction).
vec3 transmissionLight(Surface s, vec3 l, vec3 radiance)
{
    vec3 lMirror = normalize(l - 2.0 * s.n * dot(l, s.n));
    float NdotL = clampedDot(s.n, lMirror);
    if (NdotL <= 0.0)
        return vec3(0.0);
    vec3 h = normalize(lMirror + s.v);
    float alpha = max(transmissionRoughness(s.alphaRoughness, s.ior), 1e-3);
    float DV = D_GGX(clampedDot(s.n, h), alpha) * V_GGX(NdotL, s.NdotV, alpha);
    vec3 tinted = radiance * NdotL * s.baseColor * DV;
    return tinted * volumeAttenuation(s, s.thickness);
}

// Ambient transmission: the scene behind the surface, refracted and tinted.
vec3 transmissionAmbient(Surface s)
{
    vec3 refracted = refract(-s.v, s.n, 1.0 / s.ior);
    if (dot(refracted, refracted) == 0.0)
        refracted = -s.v;
    vec3 ray = normalize(refracted) * s.thickness;
    vec4 clip = frame.viewProjection * vec4(s.position + ray, 1.0);
    vec2 uv = clip.xy / max(clip.w, 1e-6) * 0.5 + 0.5;
#ifdef GL_ES
    ivec2 size = textureSize(transmissionFramebuffer, 0);  // GLSL ES 3.00: a full mip chain assumed
    float levels = floor(log2(float(max(size.x, size.y)))) + 1.0;
#else
    float levels = float(textureQueryLevels(transmissionFramebuffer));
#endif
    float lod = log2(frame.viewport.x) * transmissionRoughness(s.perceptualRoughness, s.ior);
    vec3 behind = textureLod(transmissionFramebuffer, uv, min(lod, levels - 1.0)).rgb;
    return behind * s.baseColor * volumeAttenuation(s, length(ray));
}

#endif // TRANSMISSION

#endif
