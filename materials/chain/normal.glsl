//! stage fragment
//! import vec3 worldNormal
//! export vec3 N
// The shading normal: the interpolated world normal, renormalized.

void run(in vec3 worldNormal, out vec3 N)
{
    N = normalize(worldNormal);
}
