// extensions/clearcoat.glsl - KHR_materials_clearcoat: a GGX dielectric coat
// (F0 from ior 1.5) over the base, with its own roughness and normal.
#ifndef PBR_EXT_CLEARCOAT_GLSL
#define PBR_EXT_CLEARCOAT_GLSL

#include "../surface.glsl"

// Only CLEARCOAT code calls what follows: gone when CLEARCOAT is statically 0.
#if !defined(CLEARCOAT) || CLEARCOAT

void loadClearcoat(inout Surface s)
{
    s.clearcoat = material.clearcoatFactor;
    s.clearcoatRoughness = material.clearcoatRoughnessFactor;
    if (slotUsed(SLOT_CLEARCOAT))
        s.clearcoat *= sampleSlot(clearcoatTexture, SLOT_CLEARCOAT).r;
    if (slotUsed(SLOT_CLEARCOAT_ROUGHNESS))
        s.clearcoatRoughness *= sampleSlot(clearcoatRoughnessTexture, SLOT_CLEARCOAT_ROUGHNESS).g;
    s.clearcoatRoughness = clamp(s.clearcoatRoughness, 0.0, 1.0);
    // Without its own normal texture the coat follows the geometry, not the base normal map.
    s.clearcoatNormal = s.ng;
    if (slotUsed(SLOT_CLEARCOAT_NORMAL))
    {
        vec3 nt = sampleNormalSlot(clearcoatNormalTexture, SLOT_CLEARCOAT_NORMAL, material.clearcoatNormalScale);
        s.clearcoatNormal = normalize(mat3(s.t, s.b, s.ng) * nt);
    }
    s.clearcoatF0 = vec3(iorToF0(1.5, 1.0));
}

// Reflected radiance of the coat for one light (times NdotL, without the coat weight).
vec3 clearcoatLight(Surface s, vec3 l, vec3 radiance)
{
    vec3 n = s.clearcoatNormal;
    float NdotL = clampedDot(n, l);
    if (NdotL <= 0.0)
        return vec3(0.0);
    vec3 h = normalize(l + s.v);
    float NdotV = clamp(dot(n, s.v), 1e-4, 1.0);
    float alpha = max(s.clearcoatRoughness * s.clearcoatRoughness, 1e-3);
    vec3 F = F_Schlick(s.clearcoatF0, vec3(1.0), clampedDot(s.v, h));
    return radiance * NdotL * F * D_GGX(clampedDot(n, h), alpha) * V_GGX(NdotL, NdotV, alpha);
}

// How much of the base the coat lets through, seen from the eye.
vec3 clearcoatFresnel(Surface s)
{
    return F_Schlick(s.clearcoatF0, vec3(1.0), clamp(dot(s.clearcoatNormal, s.v), 1e-4, 1.0));
}

#endif // CLEARCOAT

#endif
