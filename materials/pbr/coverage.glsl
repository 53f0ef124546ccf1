// coverage.glsl - fragment stage, every pass: base color and alpha, all that
// the depth and shadow passes need for the MASK alpha test.
// Expects the TEXCOORD / COLOR varyings of pbr.frag declared before it.
#ifndef PBR_COVERAGE_GLSL
#define PBR_COVERAGE_GLSL

#include "features.glsl"
#include "textures.glsl"

vec4 vertexColor()
{
#if VERTEX_COLOR == VERTEX_COLOR_VEC3 || VERTEX_COLOR == VERTEX_COLOR_VEC4
    return vColor;
#else
    return vec4(1.0);
#endif
}

// Base color and alpha: everything coverage needs (depth and shadow passes too).
// With KHR_materials_pbrSpecularGlossiness the same factor and slot hold the
// diffuse factor and diffuse texture.
vec4 baseColorAndAlpha()
{
    vec4 c = material.baseColorFactor;
#if !defined(BASE_COLOR_MAP) || BASE_COLOR_MAP
    if (HAS_BASE_COLOR_MAP)
        c *= sampleSlot(baseColorTexture, SLOT_BASE_COLOR);
#endif
    return c * vertexColor();
}

#endif
