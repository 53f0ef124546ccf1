// surface.glsl - fragment stage: the Surface a pixel shades with, and the core
// glTF inputs that fill it (base color, metallic-roughness, normals, occlusion,
// emission). Extension inputs are filled by extensions/*.glsl.
// Forward pass only; expects the varyings of pbr.frag declared before it.
#ifndef PBR_SURFACE_GLSL
#define PBR_SURFACE_GLSL

#include "common.glsl"
#include "scene.glsl"
#include "features.glsl"
#include "textures.glsl"
#include "brdf.glsl"
#include "coverage.glsl"

struct Surface
{
    vec3  baseColor;            // linear; metal F0 and transmission tint
    float alpha;
    vec3  diffuseColor;         // albedo of the dielectric diffuse lobe
    float metallic;
    float perceptualRoughness;
    float alphaRoughness;       // perceptualRoughness^2
    vec3  f0Dielectric;         // from IOR (and KHR_materials_specular color)
    float specularWeight;       // KHR_materials_specular factor (1 without it)
    float ior;

    vec3  position;             // world space
    vec3  v;                    // to the eye
    vec3  ng;                   // geometric normal (flipped on back faces when double sided)
    vec3  n;                    // shading normal
    vec3  t;                    // tangent frame matching the normal map
    vec3  b;
    float NdotV;

    float occlusion;
    vec3  emissive;

    float clearcoat;            // KHR_materials_clearcoat
    float clearcoatRoughness;
    vec3  clearcoatNormal;
    vec3  clearcoatF0;

    vec3  sheenColor;           // KHR_materials_sheen
    float sheenRoughness;

    float transmission;         // KHR_materials_transmission
    float thickness;            // KHR_materials_volume (world units, model scale applied)
    vec3  attenuationColor;
    float attenuationDistance;

    float iridescence;          // KHR_materials_iridescence
    float iridescenceIor;
    float iridescenceThickness; // nanometers
    vec3  iridescenceF0Dielectric;
    vec3  iridescenceF0Metal;   // thin-film Fresnel at NdotV for each base layer

    float anisotropy;           // KHR_materials_anisotropy strength
    vec3  anisotropyT;          // anisotropy direction in world space
    vec3  anisotropyB;
};

Surface defaultSurface()
{
    Surface s;
    s.baseColor = vec3(1.0);
    s.alpha = 1.0;
    s.diffuseColor = vec3(1.0);
    s.metallic = 0.0;
    s.perceptualRoughness = 1.0;
    s.alphaRoughness = 1.0;
    s.f0Dielectric = vec3(0.04);
    s.specularWeight = 1.0;
    s.ior = 1.5;
    s.position = vec3(0.0);
    s.v = vec3(0.0, 0.0, 1.0);
    s.ng = vec3(0.0, 0.0, 1.0);
    s.n = vec3(0.0, 0.0, 1.0);
    s.t = vec3(1.0, 0.0, 0.0);
    s.b = vec3(0.0, 1.0, 0.0);
    s.NdotV = 1.0;
    s.occlusion = 1.0;
    s.emissive = vec3(0.0);
    s.clearcoat = 0.0;
    s.clearcoatRoughness = 0.0;
    s.clearcoatNormal = s.n;
    s.clearcoatF0 = vec3(0.04);
    s.sheenColor = vec3(0.0);
    s.sheenRoughness = 0.0;
    s.transmission = 0.0;
    s.thickness = 0.0;
    s.attenuationColor = vec3(1.0);
    s.attenuationDistance = 0.0;
    s.iridescence = 0.0;
    s.iridescenceIor = 1.3;
    s.iridescenceThickness = 0.0;
    s.iridescenceF0Dielectric = vec3(0.0);
    s.iridescenceF0Metal = vec3(0.0);
    s.anisotropy = 0.0;
    s.anisotropyT = s.t;
    s.anisotropyB = s.b;
    return s;
}

// Metallic-roughness (core) or specular-glossiness (extension) parameters.
void loadSpecularModel(inout Surface s)
{
#if !defined(SPECULAR_GLOSSINESS) || SPECULAR_GLOSSINESS
    if (HAS_SPECULAR_GLOSSINESS)
    {
        vec3 specular = material.specularGlossinessFactor;
        float glossiness = material.glossinessFactor;
        if (slotUsed(SLOT_SPECULAR_GLOSSINESS))
        {
            vec4 sg = sampleSlot(specularGlossinessTexture, SLOT_SPECULAR_GLOSSINESS);
            specular *= sg.rgb;
            glossiness *= sg.a;
        }
        s.metallic = 0.0;
        s.perceptualRoughness = 1.0 - glossiness;
        s.f0Dielectric = specular;
        s.diffuseColor = s.baseColor * (1.0 - max3(specular));
    }
#endif
#if !defined(SPECULAR_GLOSSINESS)
    else
#endif
#if !defined(SPECULAR_GLOSSINESS) || !SPECULAR_GLOSSINESS
    {
        s.metallic = material.metallicFactor;
        s.perceptualRoughness = material.roughnessFactor;
#if !defined(METALLIC_ROUGHNESS_MAP) || METALLIC_ROUGHNESS_MAP
        if (HAS_METALLIC_ROUGHNESS_MAP)
        {
            vec4 mr = sampleSlot(metallicRoughnessTexture, SLOT_METALLIC_ROUGHNESS);
            s.perceptualRoughness *= mr.g;
            s.metallic *= mr.b;
        }
#endif
        s.diffuseColor = s.baseColor;
    }
#endif
    s.metallic = clamp(s.metallic, 0.0, 1.0);
    s.perceptualRoughness = clamp(s.perceptualRoughness, 0.0, 1.0);
    s.alphaRoughness = max(s.perceptualRoughness * s.perceptualRoughness, 1e-3);
}

#if !TANGENTS && (!defined(NORMAL_MAP) || NORMAL_MAP || !defined(ANISOTROPY) || ANISOTROPY || !defined(CLEARCOAT) || CLEARCOAT)
// Tangent frame from screen-space derivatives of position and the normal
// texture's UVs (no TANGENT attribute), orthonormal around ng. Only the normal
// map, anisotropy and the clearcoat normal read it.
void derivativeFrame(vec3 ng, out vec3 t, out vec3 b)
{
    vec2 uv = slotTexCoord(SLOT_NORMAL);
    vec3 dpdx = dFdx(vWorldPosition);
    vec3 dpdy = dFdy(vWorldPosition);
    vec2 duvdx = dFdx(uv);
    vec2 duvdy = dFdy(uv);
    float det = duvdx.x * duvdy.y - duvdy.x * duvdx.y;
    float detSign = det < 0.0 ? -1.0 : 1.0;
    // Solve dp = T du + B dv for T and B (scaled by |det|, only directions matter).
    t = (duvdy.y * dpdx - duvdx.y * dpdy) * detSign;
    vec3 bUV = (duvdx.x * dpdy - duvdy.x * dpdx) * detSign;
    t -= ng * dot(ng, t);
    if (abs(det) > 1e-12 && dot(t, t) > 1e-20)
    {
        t = normalize(t);
        b = cross(ng, t);
        if (dot(b, bUV) < 0.0)
            b = -b;   // mirrored UVs
    }
    else
    {
        t = anyOrthogonal(ng);   // no usable UVs: any frame (the normal map is then meaningless)
        b = cross(ng, t);
    }
}
#endif

// Geometric tangent frame: from the TANGENT attribute when the mesh has one,
// else from screen-space derivatives of position and the normal map's UVs.
void loadGeometryFrame(inout Surface s)
{
    s.position = vWorldPosition;
    s.v = normalize(frame.cameraPosition.xyz - vWorldPosition);
    vec3 ng = normalize(vNormal);
#if TANGENTS
    vec3 t = vTangent.xyz - ng * dot(ng, vTangent.xyz);
    t = dot(t, t) > 0.0 ? normalize(t) : anyOrthogonal(ng);
    vec3 b = cross(ng, t) * (vTangent.w < 0.0 ? -1.0 : 1.0);
#else
    vec3 t, b;
    // Only the normal map, anisotropy and the clearcoat normal read the frame
    // (kept unless all three are statically off).
#if !defined(NORMAL_MAP) || NORMAL_MAP || !defined(ANISOTROPY) || ANISOTROPY || !defined(CLEARCOAT) || CLEARCOAT
    if (HAS_NORMAL_MAP || HAS_ANISOTROPY || HAS_CLEARCOAT)
        derivativeFrame(ng, t, b);
    else
#endif
    {
        t = anyOrthogonal(ng);
        b = cross(ng, t);
    }
#endif
#if !defined(DOUBLE_SIDED) || DOUBLE_SIDED
    if (HAS_DOUBLE_SIDED && !gl_FrontFacing)
    {
        ng = -ng;
        t = -t;
        b = -b;
    }
#endif
    s.ng = ng;
    s.t = t;
    s.b = b;
    s.n = ng;
#if !defined(NORMAL_MAP) || NORMAL_MAP
    if (HAS_NORMAL_MAP)
    {
        vec3 nt = sampleNormalSlot(normalTexture, SLOT_NORMAL, material.normalScale);
        s.n = normalize(mat3(t, b, ng) * nt);
    }
#endif
    s.NdotV = clamp(dot(s.n, s.v), 1e-4, 1.0);
}

void loadOcclusionAndEmission(inout Surface s)
{
    s.occlusion = 1.0;
#if !defined(OCCLUSION_MAP) || OCCLUSION_MAP
    if (HAS_OCCLUSION_MAP)
    {
        float ao = sampleSlot(occlusionTexture, SLOT_OCCLUSION).r;
        s.occlusion = 1.0 + material.occlusionStrength * (ao - 1.0);
    }
#endif
    s.emissive = material.emissiveFactor;
#if !defined(EMISSIVE_MAP) || EMISSIVE_MAP
    if (HAS_EMISSIVE_MAP)
        s.emissive *= sampleSlot(emissiveTexture, SLOT_EMISSIVE).rgb;
#endif
#if !defined(EMISSIVE_STRENGTH) || EMISSIVE_STRENGTH
    if (HAS_EMISSIVE_STRENGTH)
        s.emissive *= material.emissiveStrength;
#endif
}

#endif
