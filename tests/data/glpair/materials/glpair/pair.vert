// GL-era vertex stage: no #version, loose uniforms, no layout qualifiers.
precision highp float;

uniform mat4 u_viewProjection;
uniform mat4 u_model;
uniform sampler2D u_displacementMap;  // declared for every permutation, read by none

in vec3 a_position;
in vec3 a_normal;
#if TEXTURED
in vec2 a_texcoord0;
#endif
#if VERTEX_COLOR
in vec4 a_color;
#endif

out vec3 v_position;
out mat3 v_tangentFrame;
out vec4 v_color;
out vec3 v_normal;
out vec2 v_uv;

void main() {
    vec4 world = u_model * vec4(a_position, 1.0);
    v_position = world.xyz;
    v_normal = mat3(u_model) * a_normal;
    v_tangentFrame = mat3(u_model);
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
