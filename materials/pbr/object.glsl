// object.glsl - set 2, binding 0: per-draw transform data (both stages).
// Skinning and morph-target buffers of the same set live in skinning.glsl and
// morph.glsl (vertex stage only).
#ifndef PBR_OBJECT_GLSL
#define PBR_OBJECT_GLSL

#ifdef GL_ES
layout(std140) uniform ObjectBlock
#else
layout(std140, set = 2, binding = 0) uniform ObjectBlock
#endif
{
    mat4 model;               //   0  node world matrix
    mat4 normalMatrix;        //  64  inverse-transpose of model (upper 3x3 used)
    uint morphVertexBase;     // 128  subtracted from gl_VertexIndex (the draw's vertexOffset)
    uint morphVertexCount;    // 132  vertices per morph target
    uint morphNormalOffset;   // 136  first vec4 of the normal deltas in MorphDeltas
    uint morphTangentOffset;  // 140  first vec4 of the tangent deltas in MorphDeltas
} object;                     // 144 bytes

#endif
