// Shared lighting helpers for the simple HLSL family.
#ifndef COMMON_LIGHTING_HLSL
#define COMMON_LIGHTING_HLSL

cbuffer Frame : register(b0)
{
    float4x4 viewProj;
    float3 lightDir;
    float ambient;
};

float lambert(float3 n)
{
    return saturate(dot(normalize(n), -lightDir)) + ambient;
}

#endif
