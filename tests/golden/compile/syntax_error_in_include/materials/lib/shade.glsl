// Shading helpers.
vec4 shade() {
    float k = ;
    return vec4(k);
}
