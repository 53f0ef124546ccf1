// Studio-style HLSL: every register class numbered from 0 (b0, t0, s0), as D3D binds them.
// Features arrive as #defines: TEXTURED is 0/1, ALPHA_MODE an index with ALPHA_MODE_<VALUE> names.

cbuffer PerFrame : register(b0)
{
    float4x4 viewProj;
    float4 lightDir;
};

cbuffer PerMaterial : register(b1)
{
    float4 baseColorFactor;
    float alphaCutoff;
    float3 padding;
};

Texture2D baseColorMap : register(t0);
Texture2D occlusionMap : register(t1);
SamplerState linearSampler : register(s0);
SamplerState pointSampler : register(s1);

struct VSInput
{
    float3 position : POSITION;
    float3 normal : NORMAL;
    float2 uv : TEXCOORD0;
};

struct PSInput
{
    float4 position : SV_Position;
    float3 normal : NORMAL;
    float2 uv : TEXCOORD0;
};

PSInput VSMain(VSInput input)
{
    PSInput output;
    output.position = mul(viewProj, float4(input.position, 1.0));
    output.normal = input.normal;
    output.uv = input.uv;
    return output;
}

float4 PSMain(PSInput input) : SV_Target0
{
    float4 color = baseColorFactor;
#if TEXTURED
    color *= baseColorMap.Sample(linearSampler, input.uv);
    color.rgb *= occlusionMap.Sample(pointSampler, input.uv).r;
#endif
#if ALPHA_MODE == ALPHA_MODE_MASK
    clip(color.a - alphaCutoff);
#endif
    float light = saturate(dot(normalize(input.normal), -lightDir.xyz)) + 0.2;
    return float4(color.rgb * light, color.a);
}
