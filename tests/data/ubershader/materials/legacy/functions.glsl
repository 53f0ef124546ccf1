// Shared helpers of the legacy ubershader (included as <legacy/functions.glsl>).
const float M_PI = 3.141592653589793;
const float GAMMA = 2.2;
const float INV_GAMMA = 1.0 / GAMMA;

vec3 linearTosRGB(vec3 color)
{
    return pow(color, vec3(INV_GAMMA));
}

vec3 toneMap(vec3 color)
{
    return color / (color + vec3(1.0));
}

float clampedDot(vec3 x, vec3 y)
{
    return clamp(dot(x, y), 0.0, 1.0);
}
