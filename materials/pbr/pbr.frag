#version 450
#extension GL_GOOGLE_include_directive : require
// pbr.frag - glTF 2.0 metallic-roughness ubershader, fragment stage.
//
// PASS_DEPTH / PASS_SHADOW: coverage only (MASK alpha test), no color output.
// PASS_FORWARD (or no PASS_ define): full shading to location 0, linear HDR
// radiance times frame.exposure; alpha is the material alpha for BLEND, else 1.
//
// Material features are tested as `if (HAS_X)` (features.glsl), so each one
// works as a #define, a specialization constant or a runtime flag; each such
// `if` sits in a `#if !defined(X) || X` guard that drops it at preprocessing
// time when X is statically 0 (materials/README.md, "Static guards"). The
// stage-interface features (UV_SETS, VERTEX_COLOR, TANGENTS) and the pass are
// plain preprocessor conditions.

#include "common.glsl"
#include "interface.glsl"

// ---- varyings ---------------------------------------------------------------------
#if UV_SETS >= 1
#ifdef GL_ES
in vec2 vTexCoord0;
#else
layout(location = VARYING_TEXCOORD_0) in vec2 vTexCoord0;
#endif
#endif
#if UV_SETS >= 2
#ifdef GL_ES
in vec2 vTexCoord1;
#else
layout(location = VARYING_TEXCOORD_1) in vec2 vTexCoord1;
#endif
#endif
#if VERTEX_COLOR == VERTEX_COLOR_VEC3 || VERTEX_COLOR == VERTEX_COLOR_VEC4
#ifdef GL_ES
in vec4 vColor;
#else
layout(location = VARYING_COLOR) in vec4 vColor;
#endif
#endif
#if !PBR_COVERAGE_ONLY
#ifdef GL_ES
in vec3 vWorldPosition;
#else
layout(location = VARYING_WORLD_POSITION) in vec3 vWorldPosition;
#endif
#ifdef GL_ES
in vec3 vNormal;
#else
layout(location = VARYING_NORMAL) in vec3 vNormal;
#endif
#if TANGENTS
#ifdef GL_ES
in vec4 vTangent;
#else
layout(location = VARYING_TANGENT) in vec4 vTangent;
#endif
#endif
#endif

#include "features.glsl"
#include "coverage.glsl"

#if PBR_COVERAGE_ONLY
// ---- depth / shadow ----------------------------------------------------------------
void main()
{
    if (ALPHA_MODE_VALUE == ALPHA_MODE_MASK)
    {
        if (baseColorAndAlpha().a < material.alphaCutoff)
            discard;
    }
}

#else
// ---- forward --------------------------------------------------------------------
#include "shading.glsl"

// Without an alpha test the depth test may run before the shader.
#if defined(ALPHA_MODE) && !defined(ALPHA_MODE_SPEC_ID) && !defined(GL_ES)
#if ALPHA_MODE != ALPHA_MODE_MASK
layout(early_fragment_tests) in;
#endif
#endif

layout(location = 0) out vec4 outColor;

void main()
{
    Surface s = defaultSurface();
    vec4 baseColor = baseColorAndAlpha();
    s.baseColor = baseColor.rgb;
    s.alpha = baseColor.a;

    if (ALPHA_MODE_VALUE == ALPHA_MODE_MASK && s.alpha < material.alphaCutoff)
        discard;
    float alpha = ALPHA_MODE_VALUE == ALPHA_MODE_BLEND ? s.alpha : 1.0;

    vec3 color;
#if !defined(UNLIT) || UNLIT
    if (HAS_UNLIT)
    {
        color = s.baseColor;
    }
#endif
#if !defined(UNLIT)
    else
#endif
#if !defined(UNLIT) || !UNLIT
    {
        completeSurface(s);
        color = shadeSurface(s);
    }
#endif
    outColor = vec4(color * frame.exposure, alpha);
}
#endif
