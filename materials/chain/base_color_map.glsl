//! stage fragment
//! import vec2 uv
//! import vec3 albedo
//! export vec3 albedo
// Modulates the albedo by the base colour texture (set 1, binding 1).

#if defined(PIPELINE_TARGET_WEBGPU)
// WebGPU has no combined image samplers: a texture at binding b, its sampler at b + 32,
// and the name makes the pair where it is sampled.
layout(set = 1, binding = 1) uniform texture2D baseColorTexture_t;
layout(set = 1, binding = 33) uniform sampler baseColorTexture_s;
#define baseColorTexture sampler2D(baseColorTexture_t, baseColorTexture_s)
#elif defined(GL_ES)
uniform sampler2D baseColorTexture;
#else
layout(set = 1, binding = 1) uniform sampler2D baseColorTexture;
#endif

void run(in vec2 uv, inout vec3 albedo)
{
    albedo *= texture(baseColorTexture, uv).rgb;
}
