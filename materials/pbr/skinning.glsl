// skinning.glsl - vertex stage: linear blend skinning with 4 or 8 influences.
//   inputs  JOINTS_0 (uvec4) @6, WEIGHTS_0 (vec4) @7; SKINNING == 8 adds JOINTS_1 @8, WEIGHTS_1 @9
//   set 2, binding 1: JointMatrices SSBO, mat4 per joint. Each matrix is
//   inverse(meshNodeWorld) * jointWorld * inverseBindMatrix, so object.model
//   still applies after skinning (glTF 2.0 section 3.7.3).
#ifndef PBR_SKINNING_GLSL
#define PBR_SKINNING_GLSL

#ifdef SKINNING_SPEC_ID
#error "pbr: SKINNING changes the vertex interface and must be static"
#endif
#ifndef SKINNING
#define SKINNING 0
#endif
#if SKINNING != 0 && SKINNING != 4 && SKINNING != 8
#error "pbr: SKINNING must be 0, 4 or 8"
#endif

#if SKINNING > 0
layout(location = 6) in uvec4 inJoints0;
layout(location = 7) in vec4 inWeights0;
#if SKINNING > 4
layout(location = 8) in uvec4 inJoints1;
layout(location = 9) in vec4 inWeights1;
#endif

#if defined(GL_ES)
// GLSL ES 3.00 has no storage buffers: a uniform block of at most 256 joints (16 KB, the
// smallest MAX_UNIFORM_BLOCK_SIZE a GLES 3 driver may have)
layout(std140) uniform JointMatrices
{
    mat4 jointMatrices[256];
};
#elif defined(PIPELINE_TARGET_WEBGPU)
// WebGPU: the same uniform block (naga reads a storage buffer as writable, which no WebGPU
// vertex stage may bind)
layout(std140, set = 2, binding = 1) uniform JointMatrices
{
    mat4 jointMatrices[256];
};
#else
layout(std430, set = 2, binding = 1) readonly buffer JointMatrices
{
    mat4 jointMatrices[];
};
#endif

mat4 skinMatrix()
{
    mat4 m = inWeights0.x * jointMatrices[inJoints0.x]
           + inWeights0.y * jointMatrices[inJoints0.y]
           + inWeights0.z * jointMatrices[inJoints0.z]
           + inWeights0.w * jointMatrices[inJoints0.w];
#if SKINNING > 4
    m += inWeights1.x * jointMatrices[inJoints1.x]
       + inWeights1.y * jointMatrices[inJoints1.y]
       + inWeights1.z * jointMatrices[inJoints1.z]
       + inWeights1.w * jointMatrices[inJoints1.w];
#endif
    return m;
}
#endif

#endif
