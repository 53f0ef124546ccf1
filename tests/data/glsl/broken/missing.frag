#version 450
#include "../common/math.glsl"
#include "does_not_exist.glsl"

layout(location = 0) out vec4 outColor;

void main() { outColor = vec4(PI); }
