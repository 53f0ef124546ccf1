#version 450
#include "lib/material.glsl"
layout(location = 0) out vec4 color;

void main() {
    color = material();
}
