// Material textures: loose sampler uniforms, each with its UV set chosen at run time
// (v_texcoord_0/1 are declared by the including stage).

vec2 pickUV(int set)
{
    return set < 1 ? v_texcoord_0 : v_texcoord_1;
}

#ifdef HAS_BASE_COLOR_MAP
uniform sampler2D u_BaseColorSampler;
uniform int u_BaseColorUVSet;
vec2 getBaseColorUV() { return pickUV(u_BaseColorUVSet); }
#endif

#ifdef HAS_METALLIC_ROUGHNESS_MAP
uniform sampler2D u_MetallicRoughnessSampler;
uniform int u_MetallicRoughnessUVSet;
vec2 getMetallicRoughnessUV() { return pickUV(u_MetallicRoughnessUVSet); }
#endif

#ifdef HAS_NORMAL_MAP
uniform sampler2D u_NormalSampler;
uniform int u_NormalUVSet;
vec2 getNormalUV() { return pickUV(u_NormalUVSet); }
#endif

#ifdef HAS_OCCLUSION_MAP
uniform sampler2D u_OcclusionSampler;
uniform int u_OcclusionUVSet;
uniform float u_OcclusionStrength;
vec2 getOcclusionUV() { return pickUV(u_OcclusionUVSet); }
#endif

#ifdef HAS_EMISSIVE_MAP
uniform sampler2D u_EmissiveSampler;
uniform int u_EmissiveUVSet;
vec2 getEmissiveUV() { return pickUV(u_EmissiveUVSet); }
#endif
