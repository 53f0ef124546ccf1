// shading.glsl - fragment stage, forward pass: the glTF 2.0 BRDF (spec
// appendix B) summed over punctual lights plus the ambient term, with the
// material extensions layered as their specifications describe:
//   dielectric = mix(diffuse -> transmission, specular, specularWeight * F)
//   base       = mix(dielectric, metal (F0 = baseColor), metallic)
//   sheen      : base * albedoScaling + sheen
//   clearcoat  : (emission + sheen layer) * (1 - coat * Fc) + coat * clearcoat lobe
#ifndef PBR_SHADING_GLSL
#define PBR_SHADING_GLSL

#include "surface.glsl"
#include "lights.glsl"
#include "ibl.glsl"
#include "extensions/specular.glsl"
#include "extensions/iridescence.glsl"
#include "extensions/anisotropy.glsl"
#include "extensions/clearcoat.glsl"
#include "extensions/sheen.glsl"
#include "extensions/transmission.glsl"

// Everything past base color and alpha (those were loaded for the alpha test).
void completeSurface(inout Surface s)
{
    loadSpecularModel(s);
    loadGeometryFrame(s);
    loadOcclusionAndEmission(s);
    loadDielectricSpecular(s);
#if !defined(IRIDESCENCE) || IRIDESCENCE
    if (HAS_IRIDESCENCE)
        loadIridescence(s);
#endif
#if !defined(ANISOTROPY) || ANISOTROPY
    if (HAS_ANISOTROPY)
        loadAnisotropy(s);
#endif
#if !defined(CLEARCOAT) || CLEARCOAT
    if (HAS_CLEARCOAT)
        loadClearcoat(s);
#endif
#if !defined(SHEEN) || SHEEN
    if (HAS_SHEEN)
        loadSheen(s);
#endif
#if !defined(TRANSMISSION) || TRANSMISSION
    if (HAS_TRANSMISSION)
        loadTransmission(s);
#endif
#if !defined(VOLUME) || VOLUME
    if (HAS_VOLUME)
        loadVolume(s);
#endif
}

// Fresnel of the dielectric and the metal base at one half-vector angle,
// replaced by the thin-film Fresnel by the iridescence factor.
void baseFresnel(Surface s, float VdotH, out vec3 fDielectric, out vec3 fMetal)
{
    fDielectric = F_Schlick(s.f0Dielectric, vec3(1.0), VdotH);
    fMetal = F_Schlick(s.baseColor, vec3(1.0), VdotH);
#if !defined(IRIDESCENCE) || IRIDESCENCE
    if (HAS_IRIDESCENCE)
    {
        fDielectric = mix(fDielectric, s.iridescenceF0Dielectric, s.iridescence);
        fMetal = mix(fMetal, s.iridescenceF0Metal, s.iridescence);
    }
#endif
}

// The base layer (dielectric/metal mix) for one punctual light.
vec3 baseLight(Surface s, vec3 l, vec3 radiance)
{
    float NdotL = clampedDot(s.n, l);
    vec3 h = normalize(l + s.v);
    float VdotH = clampedDot(s.v, h);
    vec3 fDielectric, fMetal;
    baseFresnel(s, VdotH, fDielectric, fMetal);

    vec3 diffuse = vec3(0.0);
    float specular = 0.0;
    if (NdotL > 0.0)
    {
        diffuse = radiance * NdotL * BRDF_lambertian(s.diffuseColor);
#if !defined(ANISOTROPY) || ANISOTROPY
        if (HAS_ANISOTROPY)
            specular = anisotropicSpecular(s, l, h, NdotL);
        else
#endif
            specular = D_GGX(clampedDot(s.n, h), s.alphaRoughness) * V_GGX(NdotL, s.NdotV, s.alphaRoughness);
    }
#if !defined(TRANSMISSION) || TRANSMISSION
    if (HAS_TRANSMISSION)
        diffuse = mix(diffuse, transmissionLight(s, l, radiance), s.transmission);
#endif

    vec3 specularRadiance = radiance * NdotL * specular;
    vec3 dielectric = diffuse * (1.0 - s.specularWeight * fDielectric)
                    + s.specularWeight * fDielectric * specularRadiance;
    vec3 metal = fMetal * specularRadiance;
    return mix(dielectric, metal, s.metallic);
}

// The base layer under the ambient light.
vec3 baseAmbient(Surface s)
{
    vec3 r = reflect(-s.v, s.n);
#if !defined(ANISOTROPY) || ANISOTROPY
    if (HAS_ANISOTROPY)
        r = anisotropicReflection(s);
#endif
#ifdef QUALITY_LOW
    // Runtime axis QUALITY=LOW: the SH irradiance stands in for the prefiltered cube.
    vec3 specularLight = ambientIrradiance(r);
#else
    vec3 specularLight = prefilteredRadiance(r, s.perceptualRoughness);
#endif

    vec3 fDielectric = ambientSpecularReflectance(s.f0Dielectric, s.specularWeight, s.NdotV, s.perceptualRoughness);
    vec3 fMetal = ambientSpecularReflectance(s.baseColor, 1.0, s.NdotV, s.perceptualRoughness);
#if !defined(IRIDESCENCE) || IRIDESCENCE
    if (HAS_IRIDESCENCE)
    {
        vec2 ab = brdfScaleBias(s.NdotV, s.perceptualRoughness);
        fDielectric = mix(fDielectric, s.specularWeight * (s.iridescenceF0Dielectric * ab.x + ab.y), s.iridescence);
        fMetal = mix(fMetal, s.iridescenceF0Metal * ab.x + ab.y, s.iridescence);
    }
#endif

    vec3 diffuse = ambientIrradiance(s.n) * s.diffuseColor;
#if !defined(TRANSMISSION) || TRANSMISSION
    if (HAS_TRANSMISSION)
        diffuse = mix(diffuse, transmissionAmbient(s), s.transmission);
#endif

    vec3 dielectric = diffuse * (1.0 - fDielectric) + specularLight * fDielectric;
    vec3 metal = specularLight * fMetal;
    return mix(dielectric, metal, s.metallic) * s.occlusion;
}

vec3 shadeSurface(Surface s)
{
    // Ambient layers.
    vec3 base = baseAmbient(s);
    vec3 sheen = vec3(0.0);
    vec3 coat = vec3(0.0);
#if !defined(SHEEN) || SHEEN
    if (HAS_SHEEN)
    {
        base *= 1.0 - max3(s.sheenColor) * sheenAlbedo(s.NdotV, s.sheenRoughness);
        sheen = sheenAmbient(s) * s.occlusion;
    }
#endif
#if !defined(CLEARCOAT) || CLEARCOAT
    if (HAS_CLEARCOAT)
    {
        float ccNdotV = clamp(dot(s.clearcoatNormal, s.v), 1e-4, 1.0);
        vec3 ccF = ambientSpecularReflectance(s.clearcoatF0, 1.0, ccNdotV, s.clearcoatRoughness);
        coat = prefilteredRadiance(reflect(-s.v, s.clearcoatNormal), s.clearcoatRoughness) * ccF * s.occlusion;
    }
#endif

    // Punctual lights.
    int count = min(lighting.lightCount, MAX_LIGHTS);
    for (int i = 0; i < count; ++i)
    {
#ifdef PIPELINE_TARGET_WEBGPU  // member by member: naga cannot translate a block struct's copy (OpCopyLogical)
        Light light = Light(lighting.lights[i].position, lighting.lights[i].range, lighting.lights[i].direction,
                            lighting.lights[i].intensity, lighting.lights[i].color, lighting.lights[i].type,
                            lighting.lights[i].innerConeCos, lighting.lights[i].outerConeCos, 0.0, 0.0);
#else
        Light light = lighting.lights[i];
#endif
        vec3 toLight = pointToLight(light, s.position);
        vec3 l = normalize(toLight);
        vec3 radiance = lightRadiance(light, toLight);
#ifdef SHADOWS
        // Runtime axis SHADOWS=1: micro-shadowing from the occlusion (Chan 2018).
        float aperture = 2.0 * s.occlusion * s.occlusion;
        radiance *= clamp(abs(dot(s.n, l)) + aperture - 1.0, 0.0, 1.0);
#endif
        vec3 b = baseLight(s, l, radiance);
#if !defined(SHEEN) || SHEEN
        if (HAS_SHEEN)
        {
            b *= sheenAlbedoScaling(s, l);
            sheen += sheenLight(s, l, radiance);
        }
#endif
        base += b;
#if !defined(CLEARCOAT) || CLEARCOAT
        if (HAS_CLEARCOAT)
            coat += clearcoatLight(s, l, radiance);
#endif
    }

    vec3 color = s.emissive + base + sheen;
#if !defined(CLEARCOAT) || CLEARCOAT
    if (HAS_CLEARCOAT)
        color = color * (1.0 - s.clearcoat * clearcoatFresnel(s)) + s.clearcoat * coat;
#endif
    return color;
}

#endif
