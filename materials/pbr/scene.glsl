// scene.glsl - set 0: per-view data shared by every draw of a view.
//   binding 0  FrameBlock   (UBO)   camera, viewport, shadow-pass bias
//   binding 1  LightBlock   (UBO)   punctual lights + ambient SH (fragment)
//   binding 2  envSpecular  (samplerCube) prefiltered GGX radiance, roughness -> lod
//   binding 3  brdfLUT      (sampler2D)   (NdotV, roughness) -> rg GGX scale/bias,
//                                         b Charlie DG integral, a sheen albedo E
//   binding 4  transmissionFramebuffer (sampler2D, mipmapped) opaque scene color
#ifndef PBR_SCENE_GLSL
#define PBR_SCENE_GLSL

#ifdef GL_ES
layout(std140) uniform FrameBlock
#else
layout(std140, set = 0, binding = 0) uniform FrameBlock
#endif
{
    mat4  view;            //   0
    mat4  projection;      //  64
    mat4  viewProjection;  // 128  (shadow pass: the light's view-projection)
    vec4  cameraPosition;  // 192  xyz world-space eye
    vec4  viewport;        // 208  width, height, 1/width, 1/height (pixels)
    vec4  shadowLight;     // 224  w == 0: xyz direction light travels; w == 1: xyz light position
    vec4  shadowBias;      // 240  x: normal offset (world units, scaled by sin of the light angle)
                           //      y: depth offset added to clip z (times w); zw unused
    float exposure;        // 256  linear multiplier applied to the forward output
    float envIntensity;    // 260  multiplier of the image-based ambient term
    float _framePad0;      // 264
    float _framePad1;      // 268
} frame;                   // 272 bytes

#endif
