#ifndef COMMON_FRAME_GLSL
#define COMMON_FRAME_GLSL

layout(set = 0, binding = 0) uniform Frame {
    mat4 viewProj;
    vec3 cameraPos;
    float exposure;
    vec3 lightDir;
    float lightIntensity;
} frame;

#endif
