// Metallic-roughness BRDF (GGX / Smith / Schlick).
#ifndef MESH_BRDF_GLSL
#define MESH_BRDF_GLSL
#include "../common/math.glsl"

float distributionGGX(float NdotH, float alpha) {
    float a2 = alpha * alpha;
    float d = NdotH * NdotH * (a2 - 1.0) + 1.0;
    return a2 / (PI * d * d);
}

float visibilitySmithGGX(float NdotL, float NdotV, float alpha) {
    float a2 = alpha * alpha;
    float gv = NdotL * sqrt(NdotV * NdotV * (1.0 - a2) + a2);
    float gl = NdotV * sqrt(NdotL * NdotL * (1.0 - a2) + a2);
    float g = gv + gl;
    return g > 0.0 ? 0.5 / g : 0.0;
}

vec3 fresnelSchlick(vec3 f0, float VdotH) {
    return f0 + (vec3(1.0) - f0) * pow(1.0 - VdotH, 5.0);
}

vec3 shade(vec3 baseColor, float metallic, float roughness, vec3 n, vec3 v, vec3 l) {
    vec3 h = normalize(l + v);
    float NdotL = saturate(dot(n, l));
    float NdotV = saturate(dot(n, v));
    float NdotH = saturate(dot(n, h));
    float VdotH = saturate(dot(v, h));
    float alpha = roughness * roughness;
    vec3 f0 = mix(vec3(0.04), baseColor, metallic);
    vec3 F = fresnelSchlick(f0, VdotH);
    vec3 diffuse = (vec3(1.0) - F) * (1.0 - metallic) * baseColor / PI;
    vec3 specular = F * distributionGGX(NdotH, alpha) * visibilitySmithGGX(NdotL, NdotV, alpha);
#ifdef CLEARCOAT
    vec3 fc = fresnelSchlick(vec3(0.04), VdotH);
    specular = specular * (vec3(1.0) - fc) + fc * distributionGGX(NdotH, 0.01) * visibilitySmithGGX(NdotL, NdotV, 0.01);
#endif
    return (diffuse + specular) * NdotL;
}

#endif
