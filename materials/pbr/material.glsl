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

layout(std140, set = 1, binding = 0) uniform MaterialBlock
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
