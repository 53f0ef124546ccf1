//! stage vertex
//! export vec3 position, vec3 normal, vec2 uv
// The glTF vertex attributes at the pbr family's fixed locations.

layout(location = 0) in vec3 inPosition;
layout(location = 1) in vec3 inNormal;
layout(location = 3) in vec2 inTexCoord0;

void run(out vec3 position, out vec3 normal, out vec2 uv)
{
    position = inPosition;
    normal = inNormal;
    uv = inTexCoord0;
}
