// extensions/anisotropy.glsl - KHR_materials_anisotropy: anisotropic GGX with
// alpha_t = mix(alpha, 1, strength^2) along the anisotropy direction, and a
// bent reflection vector for the ambient term.
#ifndef PBR_EXT_ANISOTROPY_GLSL
#define PBR_EXT_ANISOTROPY_GLSL

#include "../surface.glsl"

// Only ANISOTROPY code calls what follows: gone when ANISOTROPY is statically 0.
#if !defined(ANISOTROPY) || ANISOTROPY

void loadAnisotropy(inout Surface s)
{
    vec2 direction = vec2(1.0, 0.0);
    float strength = material.anisotropyStrength;
    if (slotUsed(SLOT_ANISOTROPY))
    {
        vec3 a = sampleSlot(anisotropyTexture, SLOT_ANISOTROPY).rgb;
        vec2 d = a.rg * 2.0 - 1.0;
        direction = dot(d, d) > 0.0 ? normalize(d) : vec2(1.0, 0.0);
        strength *= a.b;
    }
    float c = cos(material.anisotropyRotation);
    float sn = sin(material.anisotropyRotation);
    direction = mat2(c, sn, -sn, c) * direction;
    s.anisotropy = clamp(strength, 0.0, 1.0);
    vec3 t = mat3(s.t, s.b, s.ng) * vec3(direction, 0.0);
    t -= s.n * dot(s.n, t);
    s.anisotropyT = dot(t, t) > 0.0 ? normalize(t) : anyOrthogonal(s.n);
    s.anisotropyB = cross(s.n, s.anisotropyT);
}

vec2 anisotropicAlphas(Surface s)
{
    float at = mix(s.alphaRoughness, 1.0, s.anisotropy * s.anisotropy);
    float ab = clamp(s.alphaRoughness, 1e-3, 1.0);
    return vec2(at, ab);
}

// D * V of the anisotropic specular lobe.
float anisotropicSpecular(Surface s, vec3 l, vec3 h, float NdotL)
{
    vec2 a = anisotropicAlphas(s);
    float D = D_GGX_anisotropic(clampedDot(s.n, h), dot(s.anisotropyT, h), dot(s.anisotropyB, h), a.x, a.y);
    float V = V_GGX_anisotropic(NdotL, s.NdotV, dot(s.anisotropyB, s.v), dot(s.anisotropyT, s.v),
                                dot(s.anisotropyT, l), dot(s.anisotropyB, l), a.x, a.y);
    return D * V;
}

// Reflection direction bent towards the anisotropy direction for the ambient term.
vec3 anisotropicReflection(Surface s)
{
    vec3 grain = s.anisotropyB;   // highlights stretch across the tangent direction
    vec3 tangent = cross(grain, s.v);
    vec3 bentNormal = normalize(cross(tangent, grain));
    float bend = 1.0 - s.anisotropy * (1.0 - s.perceptualRoughness);
    bend *= bend;
    bend *= bend;
    bentNormal = normalize(mix(bentNormal, s.n, bend));
    return reflect(-s.v, bentNormal);
}

#endif // ANISOTROPY

#endif
