//! stage fragment
//! import vec3 colour
//! export vec3 colour
// Alpha test: MASK materials only.

void run(inout vec3 colour)
{
    if (colour.r < 0.5)
        discard;
}
