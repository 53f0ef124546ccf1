#include "../common/lighting.hlsl"

float4 PSMain(float4 position : SV_Position) : SV_Target0
{
    return float4(missingValue, 0.0, 0.0, 1.0);
}
