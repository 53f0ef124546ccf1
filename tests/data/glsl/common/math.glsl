#ifndef COMMON_MATH_GLSL
#define COMMON_MATH_GLSL

const float PI = 3.14159265359;

float saturate(float x) { return clamp(x, 0.0, 1.0); }

vec3 srgbToLinear(vec3 c) { return pow(c, vec3(2.2)); }

#endif
