// textures.glsl - fragment stage: per-slot UV set selection, KHR_texture_transform
// and sampling. Expects the TEXCOORD varyings (vTexCoord0/1) declared before it.
#ifndef PBR_TEXTURES_GLSL
#define PBR_TEXTURES_GLSL

#include "features.glsl"

int slotTexCoordSet(int slot) { return material.texCoord[slot >> 2][slot & 3]; }

// True when the material binds a texture to this slot (texCoord >= 0). Used for
// the extension textures, which have no feature of their own.
bool slotUsed(int slot) { return slotTexCoordSet(slot) >= 0; }

vec2 slotTexCoord(int slot)
{
#if UV_SETS >= 2
    vec2 uv = slotTexCoordSet(slot) == 1 ? vTexCoord1 : vTexCoord0;
#elif UV_SETS == 1
    vec2 uv = vTexCoord0;
#else
    vec2 uv = vec2(0.0);   // no TEXCOORD: every texture reads its first texel row
#endif
#if !defined(TEXTURE_TRANSFORM) || TEXTURE_TRANSFORM
    if (HAS_TEXTURE_TRANSFORM)
        uv = (material.uvTransform[slot] * vec3(uv, 1.0)).xy;
#endif
    return uv;
}

#ifdef PIPELINE_TARGET_WEBGPU
// A slot's name is a sampler2D(texture, sampler) pair, which no function takes as an argument.
#define sampleSlot(tex, slot) texture(tex, slotTexCoord(slot))
#define sampleNormalSlot(tex, slot, scale) scaledNormal(sampleSlot(tex, slot).xyz, scale)
vec3 scaledNormal(vec3 texel, float scale)
{
    vec3 n = texel * 2.0 - 1.0;
    return normalize(n * vec3(scale, scale, 1.0));
}
#else
vec4 sampleSlot(sampler2D tex, int slot) { return texture(tex, slotTexCoord(slot)); }

// Tangent-space normal from a normal texture, scaled in xy (glTF normalTexture.scale).
vec3 sampleNormalSlot(sampler2D tex, int slot, float scale)
{
    vec3 n = sampleSlot(tex, slot).xyz * 2.0 - 1.0;
    return normalize(n * vec3(scale, scale, 1.0));
}
#endif

#endif
