// GL-era fragment stage: its varyings in another order than the vertex stage's.
precision highp float;

uniform vec4 u_baseColorFactor;
uniform vec3 u_lightDirection;
uniform sampler2D u_baseColorTexture;  // read only when TEXTURED
uniform sampler2D u_emissiveTexture;   // declared, never read

in vec2 v_uv;
in vec3 v_normal;
in vec4 v_color;
in mat3 v_tangentFrame;
in vec3 v_position;

out vec4 o_color;

void main() {
    vec4 color = u_baseColorFactor * v_color;
#if TEXTURED
    color *= texture(u_baseColorTexture, v_uv);  // v_uv is read by textured permutations only
#endif
    vec3 n = normalize(v_tangentFrame * v_normal);
    float light = max(dot(n, -u_lightDirection), 0.0) + 0.2;
    float fog = clamp(length(v_position) / 100.0, 0.0, 1.0);
    o_color = vec4(mix(color.rgb * light, vec3(0.5), fog), color.a);
}
