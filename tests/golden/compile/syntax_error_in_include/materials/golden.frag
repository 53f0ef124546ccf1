#version 450
#include "lib/shade.glsl"
layout(location = 0) out vec4 color;

void main() {
    color = shade();
}
