// A GLSL ES pair each stage of which compiles alone: its varying v_shade is a vec3 here ...
precision highp float;

uniform mat4 u_viewProjection;

in vec3 a_position;
in vec3 a_normal;

out vec3 v_shade;

void main() {
    v_shade = a_normal * 0.5 + 0.5;
    gl_Position = u_viewProjection * vec4(a_position, 1.0);
}
