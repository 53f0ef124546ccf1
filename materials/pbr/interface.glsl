// interface.glsl - the pass selection and the features both stages see:
// UV_SETS, VERTEX_COLOR and TANGENTS change the varyings, so they are static
// (#define) features, tested here with #if. Nothing in this file tests a
// material feature or a vertex-only feature (SKINNING, MORPH_*, INSTANCING).
#ifndef PBR_INTERFACE_GLSL
#define PBR_INTERFACE_GLSL

// ---- pass --------------------------------------------------------------------
// Exactly one of PASS_DEPTH / PASS_SHADOW / PASS_FORWARD; none means forward.
#if !defined(PASS_DEPTH) && !defined(PASS_SHADOW) && !defined(PASS_FORWARD)
#define PASS_FORWARD 1
#endif
#if (defined(PASS_DEPTH) && defined(PASS_SHADOW)) || (defined(PASS_DEPTH) && defined(PASS_FORWARD)) || (defined(PASS_SHADOW) && defined(PASS_FORWARD))
#error "pbr: define exactly one of PASS_DEPTH, PASS_SHADOW, PASS_FORWARD"
#endif
// Depth and shadow only resolve coverage: no shading, no color output.
#if defined(PASS_DEPTH) || defined(PASS_SHADOW)
#define PBR_COVERAGE_ONLY 1
#else
#define PBR_COVERAGE_ONLY 0
#endif

// ---- stage-interface features (static only) ------------------------------------
#if defined(UV_SETS_SPEC_ID) || defined(VERTEX_COLOR_SPEC_ID) || defined(TANGENTS_SPEC_ID)
#error "pbr: UV_SETS, VERTEX_COLOR and TANGENTS change the stage interface and must be static"
#endif

#ifndef UV_SETS
#define UV_SETS 0
#endif
#if UV_SETS < 0 || UV_SETS > 2
#error "pbr: UV_SETS must be 0, 1 or 2"
#endif

#ifndef VERTEX_COLOR_NONE
#define VERTEX_COLOR_NONE 0
#endif
#ifndef VERTEX_COLOR_VEC3
#define VERTEX_COLOR_VEC3 1
#endif
#ifndef VERTEX_COLOR_VEC4
#define VERTEX_COLOR_VEC4 2
#endif
#ifndef VERTEX_COLOR
#define VERTEX_COLOR VERTEX_COLOR_NONE
#endif

#ifndef TANGENTS
#define TANGENTS 0
#endif

// ---- varyings (vertex out == fragment in) -------------------------------------
// Fixed locations: a location never moves when another feature toggles.
#define VARYING_WORLD_POSITION 0   // vec3, forward only
#define VARYING_NORMAL         1   // vec3, forward only
#define VARYING_TANGENT        2   // vec4 (xyz tangent, w bitangent sign), forward && TANGENTS
#define VARYING_TEXCOORD_0     3   // vec2, UV_SETS >= 1
#define VARYING_TEXCOORD_1     4   // vec2, UV_SETS >= 2
#define VARYING_COLOR          5   // vec4, VERTEX_COLOR != NONE (VEC3 gets alpha 1)

#endif
