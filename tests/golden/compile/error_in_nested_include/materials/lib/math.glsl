vec3 saturate3(vec3 v) {
    return clamp(v, 0.0, 1.0)
}
