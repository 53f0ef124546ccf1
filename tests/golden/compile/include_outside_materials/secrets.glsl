// Outside the shader library: a cook must not read this file.
vec4 secret() { return vec4(1.0); }
