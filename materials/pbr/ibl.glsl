// ibl.glsl - fragment stage: the ambient term. Diffuse irradiance from 9 SH
// coefficients (LightBlock.ambientSH), specular from a prefiltered GGX cube
// (set 0, binding 2) and the split-sum LUT (set 0, binding 3). A scene without
// an environment binds a 1x1 black cube and only its SH ambient remains.
#ifndef PBR_IBL_GLSL
#define PBR_IBL_GLSL

#include "common.glsl"
#include "scene.glsl"
#include "lights.glsl"

#if defined(PIPELINE_TARGET_WEBGPU)
// WebGPU has no combined image samplers: a texture at binding b, its sampler at b + 32,
// and the name makes the pair where it is sampled.
layout(set = 0, binding = 2) uniform textureCube envSpecular_t;
layout(set = 0, binding = 3) uniform texture2D brdfLUT_t;
layout(set = 0, binding = 34) uniform sampler envSpecular_s;
layout(set = 0, binding = 35) uniform sampler brdfLUT_s;
#define envSpecular samplerCube(envSpecular_t, envSpecular_s)
#define brdfLUT sampler2D(brdfLUT_t, brdfLUT_s)
#elif defined(GL_ES)
uniform samplerCube envSpecular;
uniform sampler2D brdfLUT;
#else
layout(set = 0, binding = 2) uniform samplerCube envSpecular;
layout(set = 0, binding = 3) uniform sampler2D brdfLUT;
#endif

// Irradiance / pi in direction n: order-2 real SH, coefficients pre-convolved
// with the clamped cosine lobe and divided by pi (diffuse = albedo * this).
vec3 ambientIrradiance(vec3 n)
{
    vec3 r = lighting.ambientSH[0].rgb * 0.282095
           + lighting.ambientSH[1].rgb * (0.488603 * n.y)
           + lighting.ambientSH[2].rgb * (0.488603 * n.z)
           + lighting.ambientSH[3].rgb * (0.488603 * n.x)
           + lighting.ambientSH[4].rgb * (1.092548 * n.x * n.y)
           + lighting.ambientSH[5].rgb * (1.092548 * n.y * n.z)
           + lighting.ambientSH[6].rgb * (0.315392 * (3.0 * n.z * n.z - 1.0))
           + lighting.ambientSH[7].rgb * (1.092548 * n.x * n.z)
           + lighting.ambientSH[8].rgb * (0.546274 * (n.x * n.x - n.y * n.y));
    return max(r, vec3(0.0)) * frame.envIntensity;
}

// Prefiltered radiance along dir; mip = perceptualRoughness * (levels - 1).
vec3 prefilteredRadiance(vec3 dir, float perceptualRoughness)
{
#ifdef GL_ES
    ivec2 size = textureSize(envSpecular, 0);  // GLSL ES 3.00: a full mip chain assumed
    float lod = perceptualRoughness * floor(log2(float(max(size.x, size.y))));
#else
    float lod = perceptualRoughness * float(textureQueryLevels(envSpecular) - 1);
#endif
    return textureLod(envSpecular, dir, lod).rgb * frame.envIntensity;
}

vec2 brdfScaleBias(float NdotV, float perceptualRoughness)
{
    return textureLod(brdfLUT, vec2(NdotV, perceptualRoughness), 0.0).rg;
}

// Split-sum specular reflectance with roughness-dependent Fresnel and
// multiple-scattering energy compensation (Fdez-Aguera 2019).
vec3 ambientSpecularReflectance(vec3 f0, float specularWeight, float NdotV, float perceptualRoughness)
{
    vec2 ab = brdfScaleBias(NdotV, perceptualRoughness);
    vec3 fr = max(vec3(1.0 - perceptualRoughness), f0) - f0;
    vec3 kS = f0 + fr * pow5(1.0 - NdotV);
    vec3 fssEss = specularWeight * (kS * ab.x + ab.y);
    float ems = 1.0 - (ab.x + ab.y);
    vec3 fAvg = specularWeight * (f0 + (1.0 - f0) / 21.0);
    vec3 fmsEms = ems * fssEss * fAvg / (1.0 - fAvg * ems);
    return fssEss + fmsEms;
}

#endif
