#version 450
#extension GL_GOOGLE_include_directive : require
// pbr.vert - glTF 2.0 metallic-roughness ubershader, vertex stage.
//
// The vertex closure tests only the stage-interface features (UV_SETS,
// VERTEX_COLOR, TANGENTS, SKINNING, MORPH_TARGETS, MORPH_NORMAL, MORPH_TANGENT,
// INSTANCING) and the PASS_* defines, so stage projection lets every material
// variant of a mesh layout share one vertex job.
//
// Vertex inputs (fixed locations, see materials/README.md):
//   @0 POSITION vec3            always
//   @1 NORMAL vec3              forward, shadow
//   @2 TANGENT vec4             forward && TANGENTS
//   @3 TEXCOORD_0 vec2          UV_SETS >= 1
//   @4 TEXCOORD_1 vec2          UV_SETS >= 2
//   @5 COLOR_0 vec3|vec4        VERTEX_COLOR == VEC3 | VEC4
//   @6..@9 JOINTS/WEIGHTS       skinning.glsl
//   @10..@12 instance TRS       instancing.glsl

#include "common.glsl"
#include "interface.glsl"
#include "scene.glsl"
#include "object.glsl"
#include "skinning.glsl"
#include "morph.glsl"
#include "instancing.glsl"

#if defined(PASS_FORWARD) || defined(PASS_SHADOW)
#define PBR_VERTEX_NORMAL 1
#else
#define PBR_VERTEX_NORMAL 0
#endif
#if defined(PASS_FORWARD) && TANGENTS
#define PBR_VERTEX_TANGENT 1
#else
#define PBR_VERTEX_TANGENT 0
#endif

layout(location = 0) in vec3 inPosition;
#if PBR_VERTEX_NORMAL
layout(location = 1) in vec3 inNormal;
#endif
#if PBR_VERTEX_TANGENT
layout(location = 2) in vec4 inTangent;
#endif
#if UV_SETS >= 1
layout(location = 3) in vec2 inTexCoord0;
#ifdef GL_ES
out vec2 vTexCoord0;
#else
layout(location = VARYING_TEXCOORD_0) out vec2 vTexCoord0;
#endif
#endif
#if UV_SETS >= 2
layout(location = 4) in vec2 inTexCoord1;
#ifdef GL_ES
out vec2 vTexCoord1;
#else
layout(location = VARYING_TEXCOORD_1) out vec2 vTexCoord1;
#endif
#endif
#if VERTEX_COLOR == VERTEX_COLOR_VEC3
layout(location = 5) in vec3 inColor0;
#elif VERTEX_COLOR == VERTEX_COLOR_VEC4
layout(location = 5) in vec4 inColor0;
#endif
#if VERTEX_COLOR == VERTEX_COLOR_VEC3 || VERTEX_COLOR == VERTEX_COLOR_VEC4
#ifdef GL_ES
out vec4 vColor;
#else
layout(location = VARYING_COLOR) out vec4 vColor;
#endif
#endif

#ifdef PASS_FORWARD
#ifdef GL_ES
out vec3 vWorldPosition;
#else
layout(location = VARYING_WORLD_POSITION) out vec3 vWorldPosition;
#endif
#ifdef GL_ES
out vec3 vNormal;
#else
layout(location = VARYING_NORMAL) out vec3 vNormal;
#endif
#if PBR_VERTEX_TANGENT
#ifdef GL_ES
out vec4 vTangent;
#else
layout(location = VARYING_TANGENT) out vec4 vTangent;
#endif
#endif
#endif

#ifndef GL_ES
out gl_PerVertex
{
    vec4 gl_Position;
};
#endif

// Local-space position through morph targets, skinning and the instance
// transform, in glTF order; returns the world-space position.
vec3 worldPosition(
#if SKINNING > 0
    mat4 skin
#endif
)
{
    vec3 p = morphPosition(inPosition);
#if SKINNING > 0
    p = (skin * vec4(p, 1.0)).xyz;
#endif
    p = instancePosition(p);
    return (object.model * vec4(p, 1.0)).xyz;
}

#if PBR_VERTEX_NORMAL
vec3 worldNormal(
#if SKINNING > 0
    mat4 skin
#endif
)
{
    vec3 n = morphNormal(inNormal);
#if SKINNING > 0
    // Joint matrices are assumed free of non-uniform scale (the usual case).
    n = mat3(skin) * n;
#endif
    n = instanceNormal(n);
    return normalize(mat3(object.normalMatrix) * n);
}
#endif

#if PBR_VERTEX_TANGENT
vec3 worldTangent(
#if SKINNING > 0
    mat4 skin
#endif
)
{
    vec3 t = morphTangent(inTangent.xyz);
#if SKINNING > 0
    t = mat3(skin) * t;
#endif
    t = instanceTangent(t);
    return normalize(mat3(object.model) * t);
}
#endif

#if SKINNING > 0
#define SKIN_ARG skin
#else
#define SKIN_ARG
#endif

void main()
{
#if SKINNING > 0
    mat4 skin = skinMatrix();
#endif
    vec3 position = worldPosition(SKIN_ARG);

#if UV_SETS >= 1
    vTexCoord0 = inTexCoord0;
#endif
#if UV_SETS >= 2
    vTexCoord1 = inTexCoord1;
#endif
#if VERTEX_COLOR == VERTEX_COLOR_VEC3
    vColor = vec4(inColor0, 1.0);
#elif VERTEX_COLOR == VERTEX_COLOR_VEC4
    vColor = inColor0;
#endif

#ifdef PASS_FORWARD
    vWorldPosition = position;
    vNormal = worldNormal(SKIN_ARG);
#if PBR_VERTEX_TANGENT
    vTangent = vec4(worldTangent(SKIN_ARG), inTangent.w);
#endif
#endif

#ifdef PASS_SHADOW
    // Normal offset: push the surface along its normal, more at grazing angles,
    // to fight shadow acne without a large constant depth bias.
    vec3 n = worldNormal(SKIN_ARG);
    vec3 toLight = frame.shadowLight.w == 0.0
        ? -normalize(frame.shadowLight.xyz)
        : normalize(frame.shadowLight.xyz - position);
    float cosAngle = clampedDot(n, toLight);
    float sinAngle = sqrt(1.0 - cosAngle * cosAngle);
    position += n * (frame.shadowBias.x * sinAngle);
#endif

    gl_Position = frame.viewProjection * vec4(position, 1.0);

#ifdef PASS_SHADOW
    gl_Position.z += frame.shadowBias.y * gl_Position.w;
#endif
}
