// Skinning from a joint-matrix texture and morphing from a displacement texture array.
// WEIGHT_COUNT (an integer define) sizes the weight array.

#ifdef USE_SKINNING
uniform sampler2D u_jointsSampler;
in vec4 a_joints_0;
in vec4 a_weights_0;
#if defined(HAS_JOINTS_1_VEC4) && defined(HAS_WEIGHTS_1_VEC4)
in vec4 a_joints_1;
in vec4 a_weights_1;
#endif

mat4 getMatrixFromTexture(sampler2D s, int index)
{
    mat4 result = mat4(1.0);
    int texSize = textureSize(s, 0).x;
    int pixelIndex = index * 4;
    for (int i = 0; i < 4; ++i)
    {
        int x = (pixelIndex + i) % texSize;
        int y = (pixelIndex + i - x) / texSize;
        result[i] = texelFetch(s, ivec2(x, y), 0);
    }
    return result;
}

mat4 getSkinningMatrix()
{
    mat4 skin = a_weights_0.x * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.x) * 2)
              + a_weights_0.y * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.y) * 2)
              + a_weights_0.z * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.z) * 2)
              + a_weights_0.w * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.w) * 2);
#if defined(HAS_JOINTS_1_VEC4) && defined(HAS_WEIGHTS_1_VEC4)
    skin += a_weights_1.x * getMatrixFromTexture(u_jointsSampler, int(a_joints_1.x) * 2)
          + a_weights_1.y * getMatrixFromTexture(u_jointsSampler, int(a_joints_1.y) * 2)
          + a_weights_1.z * getMatrixFromTexture(u_jointsSampler, int(a_joints_1.z) * 2)
          + a_weights_1.w * getMatrixFromTexture(u_jointsSampler, int(a_joints_1.w) * 2);
#endif
    return skin;
}

mat4 getSkinningNormalMatrix()
{
    return a_weights_0.x * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.x) * 2 + 1)
         + a_weights_0.y * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.y) * 2 + 1)
         + a_weights_0.z * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.z) * 2 + 1)
         + a_weights_0.w * getMatrixFromTexture(u_jointsSampler, int(a_joints_0.w) * 2 + 1);
}
#endif

#ifdef USE_MORPHING
uniform float u_morphWeights[WEIGHT_COUNT];
uniform highp sampler2DArray u_MorphTargetsSampler;
uniform int u_morphPositionOffset;
uniform int u_morphNormalOffset;
uniform int u_morphTangentOffset;

vec4 getDisplacement(int vertexID, int targetIndex, int texSize)
{
    int x = vertexID % texSize;
    int y = (vertexID - x) / texSize;
    return texelFetch(u_MorphTargetsSampler, ivec3(x, y, targetIndex), 0);
}

vec4 getTargetPosition(int vertexID)
{
    vec4 pos = vec4(0.0);
#ifdef HAS_MORPH_TARGET_POSITION
    int texSize = textureSize(u_MorphTargetsSampler, 0).x;
    for (int i = 0; i < WEIGHT_COUNT; i++)
    {
        pos += u_morphWeights[i] * getDisplacement(vertexID, u_morphPositionOffset + i, texSize);
    }
#endif
    return pos;
}

vec3 getTargetNormal(int vertexID)
{
    vec3 normal = vec3(0.0);
#ifdef HAS_MORPH_TARGET_NORMAL
    int texSize = textureSize(u_MorphTargetsSampler, 0).x;
    for (int i = 0; i < WEIGHT_COUNT; i++)
    {
        normal += u_morphWeights[i] * getDisplacement(vertexID, u_morphNormalOffset + i, texSize).xyz;
    }
#endif
    return normal;
}

vec3 getTargetTangent(int vertexID)
{
    vec3 tangent = vec3(0.0);
#ifdef HAS_MORPH_TARGET_TANGENT
    int texSize = textureSize(u_MorphTargetsSampler, 0).x;
    for (int i = 0; i < WEIGHT_COUNT; i++)
    {
        tangent += u_morphWeights[i] * getDisplacement(vertexID, u_morphTangentOffset + i, texSize).xyz;
    }
#endif
    return tangent;
}
#endif
