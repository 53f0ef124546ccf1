vec3 tint() {
    vec3 t = vec4(0.5);
    return t;
}
