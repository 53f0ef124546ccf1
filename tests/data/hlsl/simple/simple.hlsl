// The "simple" test family: one HLSL file, entry points VSMain (vertex) and PSMain (pixel).
// Features arrive as #defines (docs/architecture.md, "the define convention"):
// TEXTURED and VERTEX_COLOR are 0/1, ALPHA_MODE is an index with ALPHA_MODE_<VALUE> names.
#include "../common/lighting.hlsl"

struct VSInput
{
    float3 position : POSITION;
    float3 normal : NORMAL;
#if TEXTURED
    float2 uv : TEXCOORD0;
#endif
#if VERTEX_COLOR
    float4 color : COLOR0;
#endif
};

struct PSInput
{
    float4 position : SV_Position;
    float3 normal : NORMAL;
#if TEXTURED
    float2 uv : TEXCOORD0;
#endif
#if VERTEX_COLOR
    float4 color : COLOR0;
#endif
};

#if TEXTURED
Texture2D albedoTexture : register(t1);
SamplerState albedoSampler : register(s2);
#endif

PSInput VSMain(VSInput input)
{
    PSInput output;
    output.position = mul(viewProj, float4(input.position, 1.0));
    output.normal = input.normal;
#if TEXTURED
    output.uv = input.uv;
#endif
#if VERTEX_COLOR
    output.color = input.color;
#endif
    return output;
}

float4 PSMain(PSInput input) : SV_Target0
{
    float4 color = float4(1.0, 1.0, 1.0, 1.0);
#if TEXTURED
    color *= albedoTexture.Sample(albedoSampler, input.uv);
#endif
#if VERTEX_COLOR
    color *= input.color;
#endif
#if ALPHA_MODE == ALPHA_MODE_MASK
    clip(color.a - 0.5);
#endif
#if ALPHA_MODE != ALPHA_MODE_BLEND
    color.a = 1.0;
#endif
    return float4(color.rgb * lambert(input.normal), color.a);
}
