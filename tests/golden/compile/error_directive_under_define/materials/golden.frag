#version 450
layout(location = 0) out vec4 color;

#if MASKED
#error masked materials are not supported by this shader
#endif

void main() {
    color = vec4(1.0);
}
