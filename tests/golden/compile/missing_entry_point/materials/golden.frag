#version 450
layout(location = 0) out vec4 color;

void shade() {
    color = vec4(1.0);
}
