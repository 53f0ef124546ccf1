#version 450
#include "lib/tint.glsl"
layout(location = 0) out vec4 color;

void main() {
    color = vec4(tint(), 1.0);
}
