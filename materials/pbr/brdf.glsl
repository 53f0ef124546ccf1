// brdf.glsl - the microfacet pieces of the glTF 2.0 BRDF (spec appendix B) and of
// the KHR_materials_* extensions. All functions are pure; callers pass cosines.
#ifndef PBR_BRDF_GLSL
#define PBR_BRDF_GLSL

#include "common.glsl"

// The anisotropic and sheen terms are guarded like their callers (materials/README.md,
// "Static guards"): absent when ANISOTROPY / SHEEN is statically 0.

// Fresnel-Schlick: F = f0 + (f90 - f0) (1 - cos)^5
vec3 F_Schlick(vec3 f0, vec3 f90, float cosTheta)
{
    return f0 + (f90 - f0) * pow5(clamp(1.0 - cosTheta, 0.0, 1.0));
}

float F_Schlick(float f0, float f90, float cosTheta)
{
    return f0 + (f90 - f0) * pow5(clamp(1.0 - cosTheta, 0.0, 1.0));
}

// Reflectance at normal incidence of an interface between media of index n1, n2.
float iorToF0(float n1, float n2) { return sq((n1 - n2) / (n1 + n2)); }
vec3 iorToF0(vec3 n1, float n2) { return sq((n1 - vec3(n2)) / (n1 + vec3(n2))); }
vec3 f0ToIor(vec3 f0)
{
    vec3 s = sqrt(f0);
    return (vec3(1.0) + s) / (vec3(1.0) - s);
}

// Trowbridge-Reitz (GGX) normal distribution, alpha = perceptualRoughness^2.
float D_GGX(float NdotH, float alpha)
{
    float a2 = alpha * alpha;
    float f = NdotH * NdotH * (a2 - 1.0) + 1.0;
    return a2 / (M_PI * f * f);
}

// Height-correlated Smith visibility V = G / (4 NdotL NdotV).
float V_GGX(float NdotL, float NdotV, float alpha)
{
    float a2 = alpha * alpha;
    float ggxV = NdotL * sqrt(NdotV * NdotV * (1.0 - a2) + a2);
    float ggxL = NdotV * sqrt(NdotL * NdotL * (1.0 - a2) + a2);
    float denom = ggxV + ggxL;
    return denom > 0.0 ? 0.5 / denom : 0.0;
}

#if !defined(ANISOTROPY) || ANISOTROPY
// Anisotropic GGX (KHR_materials_anisotropy): at along the anisotropy
// direction t, ab along the bitangent b.
float D_GGX_anisotropic(float NdotH, float TdotH, float BdotH, float at, float ab)
{
    float a2 = at * ab;
    vec3 f = vec3(ab * TdotH, at * BdotH, a2 * NdotH);
    float w2 = a2 / dot(f, f);
    return a2 * w2 * w2 * M_INV_PI;
}

float V_GGX_anisotropic(float NdotL, float NdotV, float BdotV, float TdotV,
                        float TdotL, float BdotL, float at, float ab)
{
    float ggxV = NdotL * length(vec3(at * TdotV, ab * BdotV, NdotV));
    float ggxL = NdotV * length(vec3(at * TdotL, ab * BdotL, NdotL));
    float v = 0.5 / (ggxV + ggxL);
    return clamp(v, 0.0, 1.0);
}
#endif // ANISOTROPY

// Lambertian diffuse (the (1 - F) energy split is applied by the caller).
vec3 BRDF_lambertian(vec3 diffuseColor) { return diffuseColor * M_INV_PI; }

#if !defined(SHEEN) || SHEEN
// Charlie sheen distribution (Estevez & Kulla 2017), alpha = sheenRoughness^2.
float D_Charlie(float sheenRoughness, float NdotH)
{
    float alpha = max(sheenRoughness * sheenRoughness, 1e-3);
    float invAlpha = 1.0 / alpha;
    float sin2h = max(1.0 - NdotH * NdotH, 0.0078125);
    return (2.0 + invAlpha) * pow(sin2h, invAlpha * 0.5) / (2.0 * M_PI);
}

// The fitted Charlie shadowing term of KHR_materials_sheen.
float charlieL(float x, float alpha)
{
    float t = sq(1.0 - alpha);
    float a = mix(21.5473, 25.3245, t);
    float b = mix(3.82987, 3.32435, t);
    float c = mix(0.19823, 0.16801, t);
    float d = mix(-1.97760, -1.27393, t);
    float e = mix(-4.32054, -4.85967, t);
    return a / (1.0 + b * pow(x, c)) + d * x + e;
}

float lambdaSheen(float cosTheta, float alpha)
{
    return cosTheta < 0.5
        ? exp(charlieL(cosTheta, alpha))
        : exp(2.0 * charlieL(0.5, alpha) - charlieL(1.0 - cosTheta, alpha));
}

float V_Sheen(float NdotL, float NdotV, float sheenRoughness)
{
    float alpha = max(sheenRoughness * sheenRoughness, 1e-3);
    float v = 1.0 / ((1.0 + lambdaSheen(NdotV, alpha) + lambdaSheen(NdotL, alpha)) * (4.0 * NdotV * NdotL));
    return clamp(v, 0.0, 1.0);
}

#endif // SHEEN

#endif
