// The fragment stage of the legacy ubershader: metallic-roughness PBR with punctual
// lights.  GLSL ES 3.00 without a #version line; loose uniforms; #ifdef defines; the
// alpha mode compared with symbols (ALPHAMODE == ALPHAMODE_MASK).
precision highp float;
precision highp int;

// Varyings in the vertex stage's order: auto_map gives locations per stage, in order.
in vec3 v_Position;
#ifdef HAS_NORMAL_VEC3
#ifdef HAS_TANGENT_VEC4
in mat3 v_TBN;
#else
in vec3 v_Normal;
#endif
#endif
in vec2 v_texcoord_0;
in vec2 v_texcoord_1;
#ifdef HAS_COLOR_0_VEC3
in vec3 v_Color;
#endif
#ifdef HAS_COLOR_0_VEC4
in vec4 v_Color;
#endif

#include <legacy/functions.glsl>
#include "textures.glsl"
#include "punctual.glsl"

uniform vec4 u_BaseColorFactor;
uniform float u_MetallicFactor;
uniform float u_RoughnessFactor;
uniform vec3 u_EmissiveFactor;
uniform float u_AlphaCutoff;
uniform vec3 u_Camera;
uniform float u_Exposure;
#ifdef MATERIAL_EMISSIVE_STRENGTH
uniform float u_EmissiveStrength;
#endif
#ifdef MATERIAL_TRANSMISSION
uniform sampler2D u_TransmissionFramebufferSampler;
uniform float u_TransmissionFactor;
#endif


out vec4 g_finalColor;

vec4 getVertexColor()
{
    vec4 color = vec4(1.0);
#ifdef HAS_COLOR_0_VEC3
    color.rgb = v_Color;
#endif
#ifdef HAS_COLOR_0_VEC4
    color = v_Color;
#endif
    return color;
}

vec4 getBaseColor()
{
    vec4 baseColor = u_BaseColorFactor;
#ifdef HAS_BASE_COLOR_MAP
    baseColor *= texture(u_BaseColorSampler, getBaseColorUV());
#endif
    return baseColor * getVertexColor();
}

vec3 getNormal()
{
    vec3 ng;
#ifdef HAS_NORMAL_VEC3
#ifdef HAS_TANGENT_VEC4
    ng = normalize(v_TBN[2]);
#else
    ng = normalize(v_Normal);
#endif
#else
    ng = normalize(cross(dFdx(v_Position), dFdy(v_Position)));
#endif
#ifdef HAS_NORMAL_MAP
    vec3 t = normalize(dFdx(v_Position));
    vec3 b = normalize(cross(ng, t));
    vec3 n = texture(u_NormalSampler, getNormalUV()).rgb * 2.0 - vec3(1.0);
    ng = normalize(mat3(t, b, ng) * n);
#endif
    return gl_FrontFacing ? ng : -ng;
}

void main()
{
    vec4 baseColor = getBaseColor();
#if ALPHAMODE == ALPHAMODE_OPAQUE
    baseColor.a = 1.0;
#endif
#if ALPHAMODE == ALPHAMODE_MASK
    if (baseColor.a < u_AlphaCutoff)
    {
        discard;
    }
    baseColor.a = 1.0;
#endif

#ifdef MATERIAL_UNLIT
    g_finalColor = vec4(linearTosRGB(baseColor.rgb), baseColor.a);
#else
    float metallic = u_MetallicFactor;
    float roughness = u_RoughnessFactor;
#ifdef HAS_METALLIC_ROUGHNESS_MAP
    vec4 mr = texture(u_MetallicRoughnessSampler, getMetallicRoughnessUV());
    roughness *= mr.g;
    metallic *= mr.b;
#endif
    vec3 n = getNormal();
    vec3 v = normalize(u_Camera - v_Position);
    vec3 f0 = mix(vec3(0.04), baseColor.rgb, metallic);
    vec3 diffuseColor = mix(baseColor.rgb, vec3(0.0), metallic);
    float alphaRoughness = clamp(roughness * roughness, 0.001, 1.0);

    vec3 color = 0.03 * diffuseColor;
    for (int i = 0; i < LIGHT_COUNT; ++i)
    {
        color += shadeLight(u_Lights[i], v_Position, n, v, f0, diffuseColor, alphaRoughness);
    }
    color += shadeLight(u_Lights[LIGHT_COUNT], v_Position, n, v, f0, diffuseColor, alphaRoughness);

#ifdef HAS_OCCLUSION_MAP
    color *= mix(1.0, texture(u_OcclusionSampler, getOcclusionUV()).r, u_OcclusionStrength);
#endif

    vec3 emissive = u_EmissiveFactor;
#ifdef MATERIAL_EMISSIVE_STRENGTH
    emissive *= u_EmissiveStrength;
#endif
#ifdef HAS_EMISSIVE_MAP
    emissive *= texture(u_EmissiveSampler, getEmissiveUV()).rgb;
#endif
    color += emissive;

#ifdef MATERIAL_TRANSMISSION
    vec2 screen = gl_FragCoord.xy / vec2(textureSize(u_TransmissionFramebufferSampler, 0));
    vec3 behind = texture(u_TransmissionFramebufferSampler, screen).rgb;
    color = mix(color, behind * baseColor.rgb, u_TransmissionFactor);
#endif

#ifdef LINEAR_OUTPUT
    g_finalColor = vec4(color, baseColor.a);
#else
    g_finalColor = vec4(linearTosRGB(toneMap(color * u_Exposure)), baseColor.a);
#endif
#endif
}
