//! stage fragment
//! import vec4 colour

layout(location = 0) out vec4 outColor;

void run(in vec4 colour)
{
    outColor = colour;
}
