// common.glsl - constants and small math helpers shared by both stages.
// Tests no feature macro (only its own include guard), so including it never
// widens a stage's define projection.
#ifndef PBR_COMMON_GLSL
#define PBR_COMMON_GLSL

#ifdef GL_ES
// GLSL ES: full precision in both stages (blocks both stages declare must agree)
precision highp float;
precision highp int;
#endif

const float M_PI = 3.14159265358979;
const float M_INV_PI = 0.318309886183791;
const float EPSILON = 1e-5;

float sq(float x) { return x * x; }
vec3 sq(vec3 x) { return x * x; }
float saturate(float x) { return clamp(x, 0.0, 1.0); }
vec3 saturate(vec3 x) { return clamp(x, vec3(0.0), vec3(1.0)); }
float max3(vec3 v) { return max(max(v.x, v.y), v.z); }
float clampedDot(vec3 a, vec3 b) { return clamp(dot(a, b), 0.0, 1.0); }

float pow5(float x)
{
    float x2 = x * x;
    return x2 * x2 * x;
}

// Rotate v by the unit quaternion q = (x, y, z, w).
vec3 quatRotate(vec4 q, vec3 v)
{
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

// Any unit vector orthogonal to n (used when no tangent frame can be built).
vec3 anyOrthogonal(vec3 n)
{
    vec3 helper = abs(n.y) < 0.999 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    return normalize(cross(helper, n));
}

#endif
