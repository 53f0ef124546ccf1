// features.glsl - one HAS_<NAME> per material feature, valid in every mode:
//   static          #define NAME 0|1          -> const bool (plus the static guards below)
//   specialization  #define NAME_SPEC_ID <id> -> specialization constant (default false)
//   dynamic         (nothing defined)         -> runtime test of a MaterialBlock.flags bit
// Code tests `if (HAS_NAME)`, never `#if NAME` alone, so flipping a feature's mode
// in rules/pbr.yaml is a one-word change that still compiles. Each such `if` sits
// in a static guard that is false only when the feature is statically off:
//     #if !defined(NAME) || NAME          (several features: keep unless all are 0)
//     if (HAS_NAME) { ... }
//     #endif
// so glslang never sees code that cannot run (it keeps `if (false)` branches and
// the functions they call). The test is written out at each site: a helper macro
// would need `defined` produced by macro expansion, which is not portable.
// GLSL ES (webgl2, GL_ES defined) has no specialization constants: there a NAME_SPEC_ID
// feature reads its MaterialBlock.flags bit, as in dynamic mode.
// Fragment stage only: the vertex closure must not include this file nor test a
// material feature (it would widen vertex jobs).
#ifndef PBR_FEATURES_GLSL
#define PBR_FEATURES_GLSL

#include "material.glsl"

#if defined(BASE_COLOR_MAP_SPEC_ID) && !defined(GL_ES)
layout(constant_id = BASE_COLOR_MAP_SPEC_ID) const bool HAS_BASE_COLOR_MAP = false;
#elif defined(BASE_COLOR_MAP)
const bool HAS_BASE_COLOR_MAP = BASE_COLOR_MAP != 0;
#else
#define HAS_BASE_COLOR_MAP ((material.flags & MATERIAL_BASE_COLOR_MAP) != 0u)
#endif

#if defined(METALLIC_ROUGHNESS_MAP_SPEC_ID) && !defined(GL_ES)
layout(constant_id = METALLIC_ROUGHNESS_MAP_SPEC_ID) const bool HAS_METALLIC_ROUGHNESS_MAP = false;
#elif defined(METALLIC_ROUGHNESS_MAP)
const bool HAS_METALLIC_ROUGHNESS_MAP = METALLIC_ROUGHNESS_MAP != 0;
#else
#define HAS_METALLIC_ROUGHNESS_MAP ((material.flags & MATERIAL_METALLIC_ROUGHNESS_MAP) != 0u)
#endif

#if defined(NORMAL_MAP_SPEC_ID) && !defined(GL_ES)
layout(constant_id = NORMAL_MAP_SPEC_ID) const bool HAS_NORMAL_MAP = false;
#elif defined(NORMAL_MAP)
const bool HAS_NORMAL_MAP = NORMAL_MAP != 0;
#else
#define HAS_NORMAL_MAP ((material.flags & MATERIAL_NORMAL_MAP) != 0u)
#endif

#if defined(OCCLUSION_MAP_SPEC_ID) && !defined(GL_ES)
layout(constant_id = OCCLUSION_MAP_SPEC_ID) const bool HAS_OCCLUSION_MAP = false;
#elif defined(OCCLUSION_MAP)
const bool HAS_OCCLUSION_MAP = OCCLUSION_MAP != 0;
#else
#define HAS_OCCLUSION_MAP ((material.flags & MATERIAL_OCCLUSION_MAP) != 0u)
#endif

#if defined(EMISSIVE_MAP_SPEC_ID) && !defined(GL_ES)
layout(constant_id = EMISSIVE_MAP_SPEC_ID) const bool HAS_EMISSIVE_MAP = false;
#elif defined(EMISSIVE_MAP)
const bool HAS_EMISSIVE_MAP = EMISSIVE_MAP != 0;
#else
#define HAS_EMISSIVE_MAP ((material.flags & MATERIAL_EMISSIVE_MAP) != 0u)
#endif

#if defined(TEXTURE_TRANSFORM_SPEC_ID) && !defined(GL_ES)
layout(constant_id = TEXTURE_TRANSFORM_SPEC_ID) const bool HAS_TEXTURE_TRANSFORM = false;
#elif defined(TEXTURE_TRANSFORM)
const bool HAS_TEXTURE_TRANSFORM = TEXTURE_TRANSFORM != 0;
#else
#define HAS_TEXTURE_TRANSFORM ((material.flags & MATERIAL_TEXTURE_TRANSFORM) != 0u)
#endif

#if defined(UNLIT_SPEC_ID) && !defined(GL_ES)
layout(constant_id = UNLIT_SPEC_ID) const bool HAS_UNLIT = false;
#elif defined(UNLIT)
const bool HAS_UNLIT = UNLIT != 0;
#else
#define HAS_UNLIT ((material.flags & MATERIAL_UNLIT) != 0u)
#endif

#if defined(SPECULAR_GLOSSINESS_SPEC_ID) && !defined(GL_ES)
layout(constant_id = SPECULAR_GLOSSINESS_SPEC_ID) const bool HAS_SPECULAR_GLOSSINESS = false;
#elif defined(SPECULAR_GLOSSINESS)
const bool HAS_SPECULAR_GLOSSINESS = SPECULAR_GLOSSINESS != 0;
#else
#define HAS_SPECULAR_GLOSSINESS ((material.flags & MATERIAL_SPECULAR_GLOSSINESS) != 0u)
#endif

#if defined(CLEARCOAT_SPEC_ID) && !defined(GL_ES)
layout(constant_id = CLEARCOAT_SPEC_ID) const bool HAS_CLEARCOAT = false;
#elif defined(CLEARCOAT)
const bool HAS_CLEARCOAT = CLEARCOAT != 0;
#else
#define HAS_CLEARCOAT ((material.flags & MATERIAL_CLEARCOAT) != 0u)
#endif

#if defined(SHEEN_SPEC_ID) && !defined(GL_ES)
layout(constant_id = SHEEN_SPEC_ID) const bool HAS_SHEEN = false;
#elif defined(SHEEN)
const bool HAS_SHEEN = SHEEN != 0;
#else
#define HAS_SHEEN ((material.flags & MATERIAL_SHEEN) != 0u)
#endif

#if defined(TRANSMISSION_SPEC_ID) && !defined(GL_ES)
layout(constant_id = TRANSMISSION_SPEC_ID) const bool HAS_TRANSMISSION = false;
#elif defined(TRANSMISSION)
const bool HAS_TRANSMISSION = TRANSMISSION != 0;
#else
#define HAS_TRANSMISSION ((material.flags & MATERIAL_TRANSMISSION) != 0u)
#endif

#if defined(VOLUME_SPEC_ID) && !defined(GL_ES)
layout(constant_id = VOLUME_SPEC_ID) const bool HAS_VOLUME = false;
#elif defined(VOLUME)
const bool HAS_VOLUME = VOLUME != 0;
#else
#define HAS_VOLUME ((material.flags & MATERIAL_VOLUME) != 0u)
#endif

#if defined(IRIDESCENCE_SPEC_ID) && !defined(GL_ES)
layout(constant_id = IRIDESCENCE_SPEC_ID) const bool HAS_IRIDESCENCE = false;
#elif defined(IRIDESCENCE)
const bool HAS_IRIDESCENCE = IRIDESCENCE != 0;
#else
#define HAS_IRIDESCENCE ((material.flags & MATERIAL_IRIDESCENCE) != 0u)
#endif

#if defined(ANISOTROPY_SPEC_ID) && !defined(GL_ES)
layout(constant_id = ANISOTROPY_SPEC_ID) const bool HAS_ANISOTROPY = false;
#elif defined(ANISOTROPY)
const bool HAS_ANISOTROPY = ANISOTROPY != 0;
#else
#define HAS_ANISOTROPY ((material.flags & MATERIAL_ANISOTROPY) != 0u)
#endif

#if defined(SPECULAR_SPEC_ID) && !defined(GL_ES)
layout(constant_id = SPECULAR_SPEC_ID) const bool HAS_SPECULAR = false;
#elif defined(SPECULAR)
const bool HAS_SPECULAR = SPECULAR != 0;
#else
#define HAS_SPECULAR ((material.flags & MATERIAL_SPECULAR) != 0u)
#endif

#if defined(DOUBLE_SIDED_SPEC_ID) && !defined(GL_ES)
layout(constant_id = DOUBLE_SIDED_SPEC_ID) const bool HAS_DOUBLE_SIDED = false;
#elif defined(DOUBLE_SIDED)
const bool HAS_DOUBLE_SIDED = DOUBLE_SIDED != 0;
#else
#define HAS_DOUBLE_SIDED ((material.flags & MATERIAL_DOUBLE_SIDED) != 0u)
#endif

#if defined(EMISSIVE_STRENGTH_SPEC_ID) && !defined(GL_ES)
layout(constant_id = EMISSIVE_STRENGTH_SPEC_ID) const bool HAS_EMISSIVE_STRENGTH = false;
#elif defined(EMISSIVE_STRENGTH)
const bool HAS_EMISSIVE_STRENGTH = EMISSIVE_STRENGTH != 0;
#else
#define HAS_EMISSIVE_STRENGTH ((material.flags & MATERIAL_EMISSIVE_STRENGTH) != 0u)
#endif

#if defined(IOR_SPEC_ID) && !defined(GL_ES)
layout(constant_id = IOR_SPEC_ID) const bool HAS_IOR = false;
#elif defined(IOR)
const bool HAS_IOR = IOR != 0;
#else
#define HAS_IOR ((material.flags & MATERIAL_IOR) != 0u)
#endif

// ---- ALPHA_MODE: enum, usually static; all three modes work -------------------
#ifndef ALPHA_MODE_OPAQUE
#define ALPHA_MODE_OPAQUE 0
#endif
#ifndef ALPHA_MODE_MASK
#define ALPHA_MODE_MASK 1
#endif
#ifndef ALPHA_MODE_BLEND
#define ALPHA_MODE_BLEND 2
#endif
#if defined(ALPHA_MODE_SPEC_ID) && !defined(GL_ES)
layout(constant_id = ALPHA_MODE_SPEC_ID) const int ALPHA_MODE_VALUE = ALPHA_MODE_OPAQUE;
#elif defined(ALPHA_MODE)
const int ALPHA_MODE_VALUE = ALPHA_MODE;
#else
#define ALPHA_MODE_VALUE int(material.alphaMode)
#endif

#endif
