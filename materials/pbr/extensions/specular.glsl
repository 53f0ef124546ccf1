// extensions/specular.glsl - KHR_materials_ior and KHR_materials_specular: the
// dielectric F0 from the index of refraction, tinted and weighted by the
// specular color and factor.
#ifndef PBR_EXT_SPECULAR_GLSL
#define PBR_EXT_SPECULAR_GLSL

#include "../surface.glsl"

// After loadSpecularModel(): spec-gloss materials keep their explicit F0.
void loadDielectricSpecular(inout Surface s)
{
    s.ior = 1.5;
#if !defined(IOR) || IOR
    if (HAS_IOR)
        s.ior = material.ior;
#endif
#if !defined(SPECULAR_GLOSSINESS) || SPECULAR_GLOSSINESS
    if (HAS_SPECULAR_GLOSSINESS)
        return;
#endif
    vec3 f0 = vec3(iorToF0(s.ior, 1.0));
    s.specularWeight = 1.0;
#if !defined(SPECULAR) || SPECULAR
    if (HAS_SPECULAR)
    {
        vec3 color = material.specularColorFactor;
        float weight = material.specularFactor;
        if (slotUsed(SLOT_SPECULAR_COLOR))
            color *= sampleSlot(specularColorTexture, SLOT_SPECULAR_COLOR).rgb;
        if (slotUsed(SLOT_SPECULAR))
            weight *= sampleSlot(specularTexture, SLOT_SPECULAR).a;
        f0 = min(f0 * color, vec3(1.0));
        s.specularWeight = weight;
    }
#endif
    s.f0Dielectric = f0;
}

#endif
