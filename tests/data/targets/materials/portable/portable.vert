// GL-era vertex stage every target can take: no #version, loose uniforms, varyings linked by name.
precision highp float;

uniform mat4 u_viewProjection;
uniform mat4 u_model;

in vec3 a_position;
in vec3 a_normal;
#if TEXTURED
in vec2 a_texcoord0;
#endif
#if VERTEX_COLOR
in vec4 a_color;
#endif

out vec2 v_uv;
out vec4 v_color;
out vec3 v_normal;

void main() {
    vec4 world = u_model * vec4(a_position, 1.0);
    v_normal = mat3(u_model) * a_normal;
#if TEXTURED
    v_uv = a_texcoord0;
#else
    v_uv = vec2(0.0);
#endif
#if VERTEX_COLOR
    v_color = a_color;
#else
    v_color = vec4(1.0);
#endif
    gl_Position = u_viewProjection * world;
}
