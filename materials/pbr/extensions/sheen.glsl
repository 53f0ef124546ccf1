// extensions/sheen.glsl - KHR_materials_sheen: Charlie distribution with the
// fitted sheen visibility, layered over the base with albedo scaling
// (base * (1 - max(sheenColor) * E(cos))), E from brdfLUT.a.
#ifndef PBR_EXT_SHEEN_GLSL
#define PBR_EXT_SHEEN_GLSL

#include "../surface.glsl"
#include "../ibl.glsl"

// Only SHEEN code calls what follows: gone when SHEEN is statically 0.
#if !defined(SHEEN) || SHEEN

void loadSheen(inout Surface s)
{
    s.sheenColor = material.sheenColorFactor;
    s.sheenRoughness = material.sheenRoughnessFactor;
    if (slotUsed(SLOT_SHEEN_COLOR))
        s.sheenColor *= sampleSlot(sheenColorTexture, SLOT_SHEEN_COLOR).rgb;
    if (slotUsed(SLOT_SHEEN_ROUGHNESS))
        s.sheenRoughness *= sampleSlot(sheenRoughnessTexture, SLOT_SHEEN_ROUGHNESS).a;
    s.sheenRoughness = clamp(s.sheenRoughness, 0.0, 1.0);
}

vec3 sheenLight(Surface s, vec3 l, vec3 radiance)
{
    float NdotL = clampedDot(s.n, l);
    if (NdotL <= 0.0)
        return vec3(0.0);
    vec3 h = normalize(l + s.v);
    float D = D_Charlie(s.sheenRoughness, clampedDot(s.n, h));
    float V = V_Sheen(NdotL, s.NdotV, s.sheenRoughness);
    return radiance * NdotL * s.sheenColor * D * V;
}

// Directional albedo of the sheen layer (brdfLUT alpha channel).
float sheenAlbedo(float cosTheta, float sheenRoughness)
{
    return textureLod(brdfLUT, vec2(cosTheta, sheenRoughness), 0.0).a;
}

// Energy the sheen layer leaves to the base for a light direction l.
float sheenAlbedoScaling(Surface s, vec3 l)
{
    float m = max3(s.sheenColor);
    return min(1.0 - m * sheenAlbedo(s.NdotV, s.sheenRoughness),
               1.0 - m * sheenAlbedo(clampedDot(s.n, l), s.sheenRoughness));
}

// Ambient sheen: the prefiltered environment around the normal at the sheen
// roughness, times the Charlie DG integral of the LUT's blue channel.
vec3 sheenAmbient(Surface s)
{
    float dg = textureLod(brdfLUT, vec2(s.NdotV, s.sheenRoughness), 0.0).b;
    return prefilteredRadiance(s.n, s.sheenRoughness) * s.sheenColor * dg;
}

#endif // SHEEN

#endif
