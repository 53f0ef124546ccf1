// ... and a vec4 here: a GL driver refuses to link the program.
precision highp float;

in vec4 v_shade;

out vec4 o_color;

void main() {
    o_color = v_shade;
}
