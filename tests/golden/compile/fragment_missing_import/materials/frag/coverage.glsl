//! stage fragment
//! import vec4 colour
//! export vec4 colour
// Alpha test: MASK materials only.

void run(inout vec4 colour)
{
    if (colour.a < 0.5)
        discard;
}
