#version 450
#include "interface.glsl"
#include "../common/frame.glsl"

layout(location = 0) in vec3 inPosition;
layout(location = 1) in vec3 inNormal;
#ifdef VARYING_UV
layout(location = 2) in vec2 inUV0;
#endif
#if SKINNING
layout(location = 3) in uvec4 inJoints;
layout(location = 4) in vec4 inWeights;
layout(set = 1, binding = 0) readonly buffer Joints { mat4 joints[]; };
#endif

layout(location = 0) out vec3 outWorldPos;
layout(location = 1) out vec3 outNormal;
#ifdef VARYING_UV
layout(location = 2) out vec2 outUV0;
#endif

layout(push_constant) uniform Draw { mat4 model; } draw;

void main() {
    mat4 model = draw.model;
#if SKINNING
    model = model * (inWeights.x * joints[inJoints.x] + inWeights.y * joints[inJoints.y] +
                     inWeights.z * joints[inJoints.z] + inWeights.w * joints[inJoints.w]);
#endif
    vec4 world = model * vec4(inPosition, 1.0);
    outWorldPos = world.xyz;
    outNormal = normalize(mat3(model) * inNormal);
#ifdef VARYING_UV
    outUV0 = inUV0;
#endif
    gl_Position = frame.viewProj * world;
}
