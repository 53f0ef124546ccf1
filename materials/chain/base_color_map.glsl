//! stage fragment
//! import vec2 uv
//! import vec3 albedo
//! export vec3 albedo
// Modulates the albedo by the base colour texture (set 1, binding 1).

layout(set = 1, binding = 1) uniform sampler2D baseColorTexture;

void run(in vec2 uv, inout vec3 albedo)
{
    albedo *= texture(baseColorTexture, uv).rgb;
}
