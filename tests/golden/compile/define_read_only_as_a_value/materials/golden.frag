#version 450
layout(location = 0) out vec4 color;
layout(set = 0, binding = 0) uniform Lights {
    vec4 lights[MAX_LIGHTS];
};

void main() {
    color = lights[0];
}
