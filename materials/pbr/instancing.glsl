// instancing.glsl - vertex stage: EXT_mesh_gpu_instancing.
//   per-instance inputs (VK_VERTEX_INPUT_RATE_INSTANCE):
//     @10 TRANSLATION vec3, @11 ROTATION vec4 (unit quaternion xyzw), @12 SCALE vec3
//   The instance TRS applies in the node's local space: world = model * T * R * S * p.
#ifndef PBR_INSTANCING_GLSL
#define PBR_INSTANCING_GLSL

#ifdef INSTANCING_SPEC_ID
#error "pbr: INSTANCING changes the vertex interface and must be static"
#endif
#ifndef INSTANCING
#define INSTANCING 0
#endif

#if INSTANCING
layout(location = 10) in vec3 inInstanceTranslation;
layout(location = 11) in vec4 inInstanceRotation;
layout(location = 12) in vec3 inInstanceScale;

vec3 instancePosition(vec3 p) { return inInstanceTranslation + quatRotate(inInstanceRotation, inInstanceScale * p); }
// Normals take the inverse scale (non-uniform instance scales stay correct).
vec3 instanceNormal(vec3 n) { return quatRotate(inInstanceRotation, n / inInstanceScale); }
vec3 instanceTangent(vec3 t) { return quatRotate(inInstanceRotation, inInstanceScale * t); }
#else
vec3 instancePosition(vec3 p) { return p; }
vec3 instanceNormal(vec3 n) { return n; }
vec3 instanceTangent(vec3 t) { return t; }
#endif

#endif
