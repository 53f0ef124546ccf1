// lights.glsl - fragment stage: KHR_lights_punctual lights (set 0, binding 1).
#ifndef PBR_LIGHTS_GLSL
#define PBR_LIGHTS_GLSL

#include "common.glsl"

const int MAX_LIGHTS = 16;

const int LIGHT_DIRECTIONAL = 0;
const int LIGHT_POINT       = 1;
const int LIGHT_SPOT        = 2;

struct Light                   // std140, 64 bytes
{
    vec3  position;            //  0  world space (point, spot)
    float range;               // 12  <= 0: infinite
    vec3  direction;           // 16  world-space direction the light travels (directional, spot)
    float intensity;           // 28  lux (directional) or candela (point, spot)
    vec3  color;               // 32  linear
    int   type;                // 44  LIGHT_*
    float innerConeCos;        // 48  cos(innerConeAngle)
    float outerConeCos;        // 52  cos(outerConeAngle)
    float _lightPad0;          // 56
    float _lightPad1;          // 60
};

#ifdef GL_ES
layout(std140) uniform LightBlock
#else
layout(std140, set = 0, binding = 1) uniform LightBlock
#endif
{
    vec4  ambientSH[9];        //    0  irradiance / pi as order-2 SH (rgb), see ibl.glsl
    int   lightCount;          //  144
    int   _lightBlockPad0;     //  148
    int   _lightBlockPad1;     //  152
    int   _lightBlockPad2;     //  156
    Light lights[MAX_LIGHTS];  //  160
} lighting;                    // 1184 bytes

// KHR_lights_punctual recommended range falloff: smooth window times inverse square.
float rangeAttenuation(float range, float distance)
{
    float invSq = 1.0 / max(distance * distance, 1e-4);
    if (range <= 0.0)
        return invSq;
    return clamp(1.0 - pow(distance / range, 4.0), 0.0, 1.0) * invSq;
}

float spotAttenuation(vec3 pointToLight, vec3 spotDirection, float outerConeCos, float innerConeCos)
{
    float cd = dot(normalize(spotDirection), normalize(-pointToLight));
    float scale = 1.0 / max(innerConeCos - outerConeCos, 1e-3);
    float t = clamp((cd - outerConeCos) * scale, 0.0, 1.0);
    return t * t;
}

// Unnormalized vector from the shaded point to the light (directional: -direction).
vec3 pointToLight(Light light, vec3 position)
{
    return light.type == LIGHT_DIRECTIONAL ? -light.direction : light.position - position;
}

// Radiance arriving at the point (before the cosine).
vec3 lightRadiance(Light light, vec3 toLight)
{
    float attenuation = 1.0;
    if (light.type != LIGHT_DIRECTIONAL)
        attenuation = rangeAttenuation(light.range, length(toLight));
    if (light.type == LIGHT_SPOT)
        attenuation *= spotAttenuation(toLight, light.direction, light.outerConeCos, light.innerConeCos);
    return light.color * light.intensity * attenuation;
}

#endif
