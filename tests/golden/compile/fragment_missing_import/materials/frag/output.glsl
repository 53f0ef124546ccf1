//! stage fragment
//! import vec4 colour, float exposure

layout(location = 0) out vec4 outColor;

void run(in vec4 colour, in float exposure)
{
    outColor = colour;
}
