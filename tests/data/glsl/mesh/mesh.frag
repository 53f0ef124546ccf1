#version 450
#include "interface.glsl"
#include "../common/frame.glsl"
#include "brdf.glsl"

layout(location = 0) in vec3 inWorldPos;
layout(location = 1) in vec3 inNormal;
#ifdef VARYING_UV
layout(location = 2) in vec2 inUV0;
#endif

layout(location = 0) out vec4 outColor;

layout(set = 1, binding = 0) uniform Material {
    vec4 baseColorFactor;
    vec3 emissiveFactor;
    float metallicFactor;
    float roughnessFactor;
    float alphaCutoff;
    float normalScale;
    float clearcoatFactor;
} material;

#if BASE_COLOR_MAP && HAS_UV
layout(set = 1, binding = 1) uniform sampler2D baseColorTexture;
#endif
#if NORMAL_MAP && HAS_UV
layout(set = 1, binding = 2) uniform sampler2D normalTexture;
#endif
#if EMISSIVE_MAP && HAS_UV
layout(set = 1, binding = 3) uniform sampler2D emissiveTexture;
#endif

vec4 baseColor() {
    vec4 color = material.baseColorFactor;
#if BASE_COLOR_MAP && HAS_UV
    color *= vec4(srgbToLinear(texture(baseColorTexture, inUV0).rgb), texture(baseColorTexture, inUV0).a);
#endif
    return color;
}

vec3 surfaceNormal() {
    vec3 n = normalize(inNormal);
#if NORMAL_MAP && HAS_UV
    vec3 dp1 = dFdx(inWorldPos), dp2 = dFdy(inWorldPos);
    vec2 duv1 = dFdx(inUV0), duv2 = dFdy(inUV0);
    vec3 t = normalize(dp1 * duv2.t - dp2 * duv1.t);
    vec3 b = normalize(cross(n, t));
    vec3 m = texture(normalTexture, inUV0).xyz * 2.0 - 1.0;
    m.xy *= material.normalScale;
    n = normalize(mat3(t, b, n) * m);
#endif
    return n;
}

void main() {
    vec4 color = baseColor();
#if ALPHA_MODE == ALPHA_MODE_MASK
    if (color.a < material.alphaCutoff) {
        discard;
    }
#endif
    vec3 n = surfaceNormal();
    vec3 v = normalize(frame.cameraPos - inWorldPos);
    vec3 l = normalize(-frame.lightDir);
    vec3 rgb = shade(color.rgb, material.metallicFactor, material.roughnessFactor, n, v, l) * frame.lightIntensity;
    vec3 emissive = material.emissiveFactor;
#if EMISSIVE_MAP && HAS_UV
    emissive *= srgbToLinear(texture(emissiveTexture, inUV0).rgb);
#endif
    rgb += emissive;
    rgb = vec3(1.0) - exp(-rgb * frame.exposure);
#if ALPHA_MODE == ALPHA_MODE_BLEND
    outColor = vec4(rgb, color.a);
#else
    outColor = vec4(rgb, 1.0);
#endif
}
