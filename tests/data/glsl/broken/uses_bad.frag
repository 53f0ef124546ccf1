#version 450
#include "bad.glsl"

layout(location = 0) out vec4 outColor;

void main() {
    outColor = vec4(helper(1.0));
}
