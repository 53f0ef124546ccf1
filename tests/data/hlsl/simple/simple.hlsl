// A vertex + pixel shader pair in one file: entry points VSMain and PSMain.
#include "../common/lighting.hlsl"

struct VSInput
{
    float3 position : POSITION;
    float3 normal : NORMAL;
#ifdef TEXTURED
    float2 uv : TEXCOORD0;
#endif
#ifdef VERTEX_COLOR
    float4 color : COLOR0;
#endif
};

struct PSInput
{
    float4 position : SV_Position;
    float3 normal : NORMAL;
#ifdef TEXTURED
    float2 uv : TEXCOORD0;
#endif
#ifdef VERTEX_COLOR
    float4 color : COLOR0;
#endif
};

#ifdef TEXTURED
Texture2D albedoTexture : register(t1);
SamplerState albedoSampler : register(s2);
#endif

PSInput VSMain(VSInput input)
{
    PSInput output;
    output.position = mul(viewProj, float4(input.position, 1.0));
    output.normal = input.normal;
#ifdef TEXTURED
    output.uv = input.uv;
#endif
#ifdef VERTEX_COLOR
    output.color = input.color;
#endif
    return output;
}

float4 PSMain(PSInput input) : SV_Target0
{
    float4 color = float4(1.0, 1.0, 1.0, 1.0);
#ifdef TEXTURED
    color *= albedoTexture.Sample(albedoSampler, input.uv);
#endif
#ifdef VERTEX_COLOR
    color *= input.color;
#endif
    return float4(color.rgb * lambert(input.normal), color.a);
}
