#include "lib/math.glsl"

vec4 material() {
    return vec4(saturate3(vec3(2.0)), 1.0);
}
