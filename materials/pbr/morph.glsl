// morph.glsl - vertex stage: morph targets read from a storage buffer.
//   set 2, binding 2: MorphDeltas SSBO, vec4 per (target, vertex); xyz used.
//     position delta of target t, vertex v: deltas[t * morphVertexCount + v]
//     normal  delta: deltas[morphNormalOffset  + t * morphVertexCount + v]  (MORPH_NORMAL)
//     tangent delta: deltas[morphTangentOffset + t * morphVertexCount + v]  (MORPH_TANGENT)
//     v = gl_VertexIndex - object.morphVertexBase
//   set 2, binding 3: MorphWeights UBO, vec4 weights[(MORPH_TARGETS + 3) / 4],
//     weight of target t in weights[t / 4][t % 4]; unused entries must be 0.
#ifndef PBR_MORPH_GLSL
#define PBR_MORPH_GLSL

#if defined(MORPH_TARGETS_SPEC_ID) || defined(MORPH_NORMAL_SPEC_ID) || defined(MORPH_TANGENT_SPEC_ID)
#error "pbr: MORPH_TARGETS, MORPH_NORMAL and MORPH_TANGENT must be static"
#endif
#ifndef MORPH_TARGETS
#define MORPH_TARGETS 0
#endif
#ifndef MORPH_NORMAL
#define MORPH_NORMAL 0
#endif
#ifndef MORPH_TANGENT
#define MORPH_TANGENT 0
#endif
#if MORPH_TARGETS < 0 || MORPH_TARGETS > 8
#error "pbr: MORPH_TARGETS must be 0..8"
#endif

#if MORPH_TARGETS > 0
#if defined(GL_ES)
// GLSL ES 3.00 has no storage buffers: the deltas are the texels of an RGBA32F texture,
// 4096 wide, read in row-major order (delta i at (i % 4096, i / 4096))
uniform highp sampler2D morphDeltaTexture;
#elif defined(PIPELINE_TARGET_WEBGPU)
// WebGPU: the same texture (naga reads a storage buffer as writable, which no WebGPU vertex
// stage may bind), read without a sampler
#extension GL_EXT_samplerless_texture_functions : require
layout(set = 2, binding = 2) uniform texture2D morphDeltaTexture;
#else
layout(std430, set = 2, binding = 2) readonly buffer MorphDeltas
{
    vec4 morphDeltas[];
};
#endif

#ifdef GL_ES
layout(std140) uniform MorphWeights
#else
layout(std140, set = 2, binding = 3) uniform MorphWeights
#endif
{
    vec4 morphWeights[(MORPH_TARGETS + 3) / 4];
};

float morphWeight(int t) { return morphWeights[t >> 2][t & 3]; }

#ifdef GL_ES
uint morphVertex() { return uint(gl_VertexID) - object.morphVertexBase; }
#else
uint morphVertex() { return uint(gl_VertexIndex) - object.morphVertexBase; }
#endif

vec3 morphDelta(uint base)
{
    uint v = morphVertex();
    vec3 sum = vec3(0.0);
    for (int t = 0; t < MORPH_TARGETS; ++t)
#if defined(GL_ES) || defined(PIPELINE_TARGET_WEBGPU)
    {
        int i = int(base + uint(t) * object.morphVertexCount + v);
        sum += morphWeight(t) * texelFetch(morphDeltaTexture, ivec2(i & 4095, i >> 12), 0).xyz;
    }
#else
        sum += morphWeight(t) * morphDeltas[base + uint(t) * object.morphVertexCount + v].xyz;
#endif
    return sum;
}

vec3 morphPosition(vec3 p) { return p + morphDelta(0u); }
#if MORPH_NORMAL
vec3 morphNormal(vec3 n) { return n + morphDelta(object.morphNormalOffset); }
#else
vec3 morphNormal(vec3 n) { return n; }
#endif
#if MORPH_TANGENT
vec3 morphTangent(vec3 t) { return t + morphDelta(object.morphTangentOffset); }
#else
vec3 morphTangent(vec3 t) { return t; }
#endif

#else
vec3 morphPosition(vec3 p) { return p; }
vec3 morphNormal(vec3 n) { return n; }
vec3 morphTangent(vec3 t) { return t; }
#endif

#endif
