//! stage fragment
//! import vec2 uv
//! export vec4 colour

void run(in vec2 uv, out vec4 colour)
{
    colour = vec4(uv, 0.0, 1.0);
}
