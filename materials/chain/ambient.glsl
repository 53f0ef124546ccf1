//! stage fragment
//! import vec3 albedo
//! export vec3 radiance
// A constant ambient term: where the light fragments start accumulating.

void run(in vec3 albedo, out vec3 radiance)
{
    radiance = albedo * 0.03;
}
