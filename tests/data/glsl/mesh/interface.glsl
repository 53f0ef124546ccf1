// Varyings shared by mesh.vert and mesh.frag.
#ifndef MESH_INTERFACE_GLSL
#define MESH_INTERFACE_GLSL

#define HAS_UV (UV_SETS > 0)

#if HAS_UV
#define VARYING_UV 1
#endif

#endif
