//! stage vertex
//! export vec2 uv

layout(location = 0) in vec3 inPosition;

void run(out vec2 uv)
{
    uv = inPosition.xz;
    gl_Position = vec4(inPosition, 1.0);
}
