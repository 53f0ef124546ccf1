float4 VSMain(float3 position : POSITION) : SV_Position {
    return float4(position, 1.0);
}

float4 PSMain() : SV_Target {
    float4 color = float4(1.0, 1.0, 1.0, 1.0);
#if MASKED
    clip(color.a - alphaCutoff);
#endif
    return color;
}
