// KHR_lights_punctual: LIGHT_COUNT (an integer define) sizes the light array; the
// extra last entry is the headlight every scene gets.
#ifndef MATERIAL_UNLIT
const int LightType_Directional = 0;
const int LightType_Point = 1;
const int LightType_Spot = 2;

struct Light
{
    vec3 direction;
    float range;
    vec3 color;
    float intensity;
    vec3 position;
    float innerConeCos;
    float outerConeCos;
    int type;
};

uniform Light u_Lights[LIGHT_COUNT + 1];

float rangeAttenuation(float range, float distance)
{
    if (range <= 0.0)
    {
        return 1.0 / (distance * distance);
    }
    return max(min(1.0 - pow(distance / range, 4.0), 1.0), 0.0) / (distance * distance);
}

vec3 shadeLight(Light light, vec3 position, vec3 n, vec3 v, vec3 f0, vec3 diffuseColor, float alphaRoughness)
{
    vec3 l = -light.direction;
    float attenuation = 1.0;
    if (light.type != LightType_Directional)
    {
        vec3 toLight = light.position - position;
        l = normalize(toLight);
        attenuation = rangeAttenuation(light.range, length(toLight));
    }
    if (light.type == LightType_Spot)
    {
        float cd = dot(light.direction, -l);
        attenuation *= smoothstep(light.outerConeCos, light.innerConeCos, cd);
    }
    vec3 h = normalize(l + v);
    float nl = clampedDot(n, l);
    float nh = clampedDot(n, h);
    float vh = clampedDot(v, h);
    vec3 f = f0 + (vec3(1.0) - f0) * pow(1.0 - vh, 5.0);
    float a2 = alphaRoughness * alphaRoughness;
    float d = nh * nh * (a2 - 1.0) + 1.0;
    float specular = a2 / (M_PI * d * d);
    vec3 radiance = light.color * light.intensity * attenuation;
    return radiance * nl * ((vec3(1.0) - f) * diffuseColor / M_PI + f * specular * 0.25);
}
#endif
