// GL-era fragment stage: its varyings in another order than the vertex stage's.
precision highp float;

uniform vec4 u_baseColorFactor;
uniform vec3 u_lightDirection;
#if TEXTURED
uniform sampler2D u_baseColorTexture;  // a combined image sampler: WebGPU has none
#endif

in vec3 v_normal;
in vec4 v_color;
in vec2 v_uv;

out vec4 o_color;

void main() {
    vec4 color = u_baseColorFactor * v_color;
#if TEXTURED
    color *= texture(u_baseColorTexture, v_uv);
#endif
    float light = max(dot(normalize(v_normal), -u_lightDirection), 0.0) + 0.2;
    o_color = vec4(color.rgb * light, color.a);
}
