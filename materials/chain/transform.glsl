//! stage vertex
//! import vec3 position, vec3 normal
//! export vec3 worldPosition, vec3 worldNormal
// Object space to world space (set 2, binding 0: the per-draw transform).

#ifdef GL_ES
layout(std140) uniform ObjectBlock
#else
layout(std140, set = 2, binding = 0) uniform ObjectBlock
#endif
{
    mat4 model;
    mat4 normalMatrix;
} object;

void run(in vec3 position, in vec3 normal, out vec3 worldPosition, out vec3 worldNormal)
{
    worldPosition = (object.model * vec4(position, 1.0)).xyz;
    worldNormal = mat3(object.normalMatrix) * normal;
}
