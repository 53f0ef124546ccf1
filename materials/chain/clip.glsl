//! stage vertex
//! import vec3 worldPosition
// World space to clip space (set 0, binding 0: the view).  A sink: it writes gl_Position.

#ifdef GL_ES
layout(std140) uniform FrameBlock
#else
layout(std140, set = 0, binding = 0) uniform FrameBlock
#endif
{
    mat4 view;
    mat4 projection;
    mat4 viewProjection;
    vec4 cameraPosition;
} frame;

void run(in vec3 worldPosition)
{
    gl_Position = frame.viewProjection * vec4(worldPosition, 1.0);
}
