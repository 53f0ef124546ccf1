// material.glsl - set 1: the material. Binding 0 is the MaterialBlock UBO
// (std140, 1120 bytes), bindings 1..18 one combined image sampler per texture
// slot. Every slot is declared in every permutation, so all permutations of
// the family share one descriptor set layout; bind a 1x1 white texture to the
// slots a material does not use.
#ifndef PBR_MATERIAL_GLSL
#define PBR_MATERIAL_GLSL

// ---- texture slots -------------------------------------------------------------
// Index into MaterialBlock.texCoord / uvTransform; binding = slot + 1.
const int SLOT_BASE_COLOR            = 0;   // baseColorTexture (spec-gloss: diffuseTexture)
const int SLOT_METALLIC_ROUGHNESS    = 1;   // metallicRoughnessTexture (G roughness, B metallic)
const int SLOT_NORMAL                = 2;   // normalTexture
const int SLOT_OCCLUSION             = 3;   // occlusionTexture (R)
const int SLOT_EMISSIVE              = 4;   // emissiveTexture
const int SLOT_CLEARCOAT             = 5;   // clearcoatTexture (R)
const int SLOT_CLEARCOAT_ROUGHNESS   = 6;   // clearcoatRoughnessTexture (G)
const int SLOT_CLEARCOAT_NORMAL      = 7;   // clearcoatNormalTexture
const int SLOT_SHEEN_COLOR           = 8;   // sheenColorTexture (RGB)
const int SLOT_SHEEN_ROUGHNESS       = 9;   // sheenRoughnessTexture (A)
const int SLOT_TRANSMISSION          = 10;  // transmissionTexture (R)
const int SLOT_THICKNESS             = 11;  // thicknessTexture (G)
const int SLOT_IRIDESCENCE           = 12;  // iridescenceTexture (R)
const int SLOT_IRIDESCENCE_THICKNESS = 13;  // iridescenceThicknessTexture (G)
const int SLOT_ANISOTROPY            = 14;  // anisotropyTexture (RG direction, B strength)
const int SLOT_SPECULAR              = 15;  // specularTexture (A)
const int SLOT_SPECULAR_COLOR        = 16;  // specularColorTexture (RGB)
const int SLOT_SPECULAR_GLOSSINESS   = 17;  // specularGlossinessTexture (RGB specular, A glossiness)
const int SLOT_COUNT                 = 18;

// ---- flags bits: the runtime test of a feature in `dynamic` mode ---------------
// The engine sets every bit truthfully; only dynamic-mode features read them.
const uint MATERIAL_BASE_COLOR_MAP         = 1u << 0;
const uint MATERIAL_METALLIC_ROUGHNESS_MAP = 1u << 1;
const uint MATERIAL_NORMAL_MAP             = 1u << 2;
const uint MATERIAL_OCCLUSION_MAP          = 1u << 3;
const uint MATERIAL_EMISSIVE_MAP           = 1u << 4;
const uint MATERIAL_TEXTURE_TRANSFORM      = 1u << 5;
const uint MATERIAL_UNLIT                  = 1u << 6;
const uint MATERIAL_SPECULAR_GLOSSINESS    = 1u << 7;
const uint MATERIAL_CLEARCOAT              = 1u << 8;
const uint MATERIAL_SHEEN                  = 1u << 9;
const uint MATERIAL_TRANSMISSION           = 1u << 10;
const uint MATERIAL_VOLUME                 = 1u << 11;
const uint MATERIAL_IRIDESCENCE            = 1u << 12;
const uint MATERIAL_ANISOTROPY             = 1u << 13;
const uint MATERIAL_SPECULAR               = 1u << 14;
const uint MATERIAL_DOUBLE_SIDED           = 1u << 15;
const uint MATERIAL_EMISSIVE_STRENGTH      = 1u << 16;
const uint MATERIAL_IOR                    = 1u << 17;

#ifdef GL_ES
layout(std140) uniform MaterialBlock
#else
layout(std140, set = 1, binding = 0) uniform MaterialBlock
#endif
{
    vec4  baseColorFactor;            //    0  (spec-gloss: diffuseFactor)
    vec3  emissiveFactor;             //   16
    float emissiveStrength;           //   28  KHR_materials_emissive_strength
    float metallicFactor;             //   32
    float roughnessFactor;            //   36
    float normalScale;                //   40
    float occlusionStrength;          //   44
    float alphaCutoff;                //   48
    float ior;                        //   52  KHR_materials_ior (1.5 when absent)
    uint  flags;                      //   56  MATERIAL_* bits
    uint  alphaMode;                  //   60  0 OPAQUE, 1 MASK, 2 BLEND (read when ALPHA_MODE is dynamic)
    vec3  specularGlossinessFactor;   //   64  spec-gloss specularFactor
    float glossinessFactor;           //   76  spec-gloss glossinessFactor
    vec3  specularColorFactor;        //   80  KHR_materials_specular
    float specularFactor;             //   92  KHR_materials_specular
    vec3  sheenColorFactor;           //   96
    float sheenRoughnessFactor;       //  108
    vec3  attenuationColor;           //  112  KHR_materials_volume
    float attenuationDistance;        //  124  <= 0 means infinite (no absorption)
    float clearcoatFactor;            //  128
    float clearcoatRoughnessFactor;   //  132
    float clearcoatNormalScale;       //  136
    float transmissionFactor;         //  140
    float thicknessFactor;            //  144
    float iridescenceFactor;          //  148
    float iridescenceIor;             //  152
    float iridescenceThicknessMin;    //  156  nanometers
    float iridescenceThicknessMax;    //  160  nanometers
    float anisotropyStrength;         //  164
    float anisotropyRotation;         //  168  radians
    float _materialPad0;              //  172
    ivec4 texCoord[5];                //  176  per slot: TEXCOORD set (0/1), -1 = slot unused
    mat3  uvTransform[SLOT_COUNT];    //  256  per slot KHR_texture_transform (3 x vec4 columns each)
} material;                           // 1120 bytes

#if defined(PIPELINE_TARGET_WEBGPU)
// WebGPU has no combined image samplers: a texture at binding b, its sampler at b + 32,
// and the name makes the pair where it is sampled.
layout(set = 1, binding = 1)  uniform texture2D baseColorTexture_t;
layout(set = 1, binding = 2)  uniform texture2D metallicRoughnessTexture_t;
layout(set = 1, binding = 3)  uniform texture2D normalTexture_t;
layout(set = 1, binding = 4)  uniform texture2D occlusionTexture_t;
layout(set = 1, binding = 5)  uniform texture2D emissiveTexture_t;
layout(set = 1, binding = 6)  uniform texture2D clearcoatTexture_t;
layout(set = 1, binding = 7)  uniform texture2D clearcoatRoughnessTexture_t;
layout(set = 1, binding = 8)  uniform texture2D clearcoatNormalTexture_t;
layout(set = 1, binding = 9)  uniform texture2D sheenColorTexture_t;
layout(set = 1, binding = 10) uniform texture2D sheenRoughnessTexture_t;
layout(set = 1, binding = 11) uniform texture2D transmissionTexture_t;
layout(set = 1, binding = 12) uniform texture2D thicknessTexture_t;
layout(set = 1, binding = 13) uniform texture2D iridescenceTexture_t;
layout(set = 1, binding = 14) uniform texture2D iridescenceThicknessTexture_t;
layout(set = 1, binding = 15) uniform texture2D anisotropyTexture_t;
layout(set = 1, binding = 16) uniform texture2D specularTexture_t;
layout(set = 1, binding = 17) uniform texture2D specularColorTexture_t;
layout(set = 1, binding = 18) uniform texture2D specularGlossinessTexture_t;
layout(set = 1, binding = 33) uniform sampler baseColorTexture_s;
layout(set = 1, binding = 34) uniform sampler metallicRoughnessTexture_s;
layout(set = 1, binding = 35) uniform sampler normalTexture_s;
layout(set = 1, binding = 36) uniform sampler occlusionTexture_s;
layout(set = 1, binding = 37) uniform sampler emissiveTexture_s;
layout(set = 1, binding = 38) uniform sampler clearcoatTexture_s;
layout(set = 1, binding = 39) uniform sampler clearcoatRoughnessTexture_s;
layout(set = 1, binding = 40) uniform sampler clearcoatNormalTexture_s;
layout(set = 1, binding = 41) uniform sampler sheenColorTexture_s;
layout(set = 1, binding = 42) uniform sampler sheenRoughnessTexture_s;
layout(set = 1, binding = 43) uniform sampler transmissionTexture_s;
layout(set = 1, binding = 44) uniform sampler thicknessTexture_s;
layout(set = 1, binding = 45) uniform sampler iridescenceTexture_s;
layout(set = 1, binding = 46) uniform sampler iridescenceThicknessTexture_s;
layout(set = 1, binding = 47) uniform sampler anisotropyTexture_s;
layout(set = 1, binding = 48) uniform sampler specularTexture_s;
layout(set = 1, binding = 49) uniform sampler specularColorTexture_s;
layout(set = 1, binding = 50) uniform sampler specularGlossinessTexture_s;
#define baseColorTexture sampler2D(baseColorTexture_t, baseColorTexture_s)
#define metallicRoughnessTexture sampler2D(metallicRoughnessTexture_t, metallicRoughnessTexture_s)
#define normalTexture sampler2D(normalTexture_t, normalTexture_s)
#define occlusionTexture sampler2D(occlusionTexture_t, occlusionTexture_s)
#define emissiveTexture sampler2D(emissiveTexture_t, emissiveTexture_s)
#define clearcoatTexture sampler2D(clearcoatTexture_t, clearcoatTexture_s)
#define clearcoatRoughnessTexture sampler2D(clearcoatRoughnessTexture_t, clearcoatRoughnessTexture_s)
#define clearcoatNormalTexture sampler2D(clearcoatNormalTexture_t, clearcoatNormalTexture_s)
#define sheenColorTexture sampler2D(sheenColorTexture_t, sheenColorTexture_s)
#define sheenRoughnessTexture sampler2D(sheenRoughnessTexture_t, sheenRoughnessTexture_s)
#define transmissionTexture sampler2D(transmissionTexture_t, transmissionTexture_s)
#define thicknessTexture sampler2D(thicknessTexture_t, thicknessTexture_s)
#define iridescenceTexture sampler2D(iridescenceTexture_t, iridescenceTexture_s)
#define iridescenceThicknessTexture sampler2D(iridescenceThicknessTexture_t, iridescenceThicknessTexture_s)
#define anisotropyTexture sampler2D(anisotropyTexture_t, anisotropyTexture_s)
#define specularTexture sampler2D(specularTexture_t, specularTexture_s)
#define specularColorTexture sampler2D(specularColorTexture_t, specularColorTexture_s)
#define specularGlossinessTexture sampler2D(specularGlossinessTexture_t, specularGlossinessTexture_s)
#elif defined(GL_ES)
uniform sampler2D baseColorTexture;
uniform sampler2D metallicRoughnessTexture;
uniform sampler2D normalTexture;
uniform sampler2D occlusionTexture;
uniform sampler2D emissiveTexture;
uniform sampler2D clearcoatTexture;
uniform sampler2D clearcoatRoughnessTexture;
uniform sampler2D clearcoatNormalTexture;
uniform sampler2D sheenColorTexture;
uniform sampler2D sheenRoughnessTexture;
uniform sampler2D transmissionTexture;
uniform sampler2D thicknessTexture;
uniform sampler2D iridescenceTexture;
uniform sampler2D iridescenceThicknessTexture;
uniform sampler2D anisotropyTexture;
uniform sampler2D specularTexture;
uniform sampler2D specularColorTexture;
uniform sampler2D specularGlossinessTexture;
#else
layout(set = 1, binding = 1)  uniform sampler2D baseColorTexture;
layout(set = 1, binding = 2)  uniform sampler2D metallicRoughnessTexture;
layout(set = 1, binding = 3)  uniform sampler2D normalTexture;
layout(set = 1, binding = 4)  uniform sampler2D occlusionTexture;
layout(set = 1, binding = 5)  uniform sampler2D emissiveTexture;
layout(set = 1, binding = 6)  uniform sampler2D clearcoatTexture;
layout(set = 1, binding = 7)  uniform sampler2D clearcoatRoughnessTexture;
layout(set = 1, binding = 8)  uniform sampler2D clearcoatNormalTexture;
layout(set = 1, binding = 9)  uniform sampler2D sheenColorTexture;
layout(set = 1, binding = 10) uniform sampler2D sheenRoughnessTexture;
layout(set = 1, binding = 11) uniform sampler2D transmissionTexture;
layout(set = 1, binding = 12) uniform sampler2D thicknessTexture;
layout(set = 1, binding = 13) uniform sampler2D iridescenceTexture;
layout(set = 1, binding = 14) uniform sampler2D iridescenceThicknessTexture;
layout(set = 1, binding = 15) uniform sampler2D anisotropyTexture;
layout(set = 1, binding = 16) uniform sampler2D specularTexture;
layout(set = 1, binding = 17) uniform sampler2D specularColorTexture;
layout(set = 1, binding = 18) uniform sampler2D specularGlossinessTexture;
#endif

#endif
