#version 450
layout(location = 0) out vec4 color;
#include "lib/lighting.glsl"

void main() {
    color = vec4(1.0);
}
