#version 450
layout(location = 0) out vec4 outColor;

void main() {
#ifdef BROKEN
    outColor = vec4(notDefinedHere);
#else
    outColor = vec4(1.0);
#endif
}
