"""Shaders whose SPIR-V the reflection tests read: vertex inputs of every kind, each descriptor kind, push constants."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, compile_batch

NEEDS_SPIRV_CROSS = pytest.mark.skipif(shutil.which("spirv-cross") is None,
                                       reason="spirv-cross (Debian package) is not installed; it reflects the blobs")

VERTEX = """#version 450
layout(location = 4) in ivec2 inIds;
layout(location = 0) in vec3 inPosition;
layout(location = 3) in float inWeight;
layout(location = 2) in uvec4 inJoints;
layout(location = 1) in vec2 inUv;
layout(location = 0) out vec2 outUv;
layout(set = 1, binding = 0) uniform Frame { mat4 viewProj; vec4 tint; } frame;
layout(push_constant) uniform Push { mat4 model; vec4 extra; } push;
void main() {
    outUv = inUv + float(inJoints.x + uint(inIds.y)) * inWeight + push.extra.xy;
    gl_Position = frame.viewProj * push.model * vec4(inPosition, 1.0);
}
"""
FRAGMENT = """#version 450
layout(constant_id = 3) const bool FLIP = true;
layout(constant_id = 1) const int COUNT = 4;
layout(set = 2, binding = 1) uniform sampler smp;
layout(set = 2, binding = 0) uniform texture2D plain;
layout(set = 0, binding = 2) uniform sampler2D maps[3];
layout(set = 0, binding = 1) buffer Lights { vec4 lights[]; };
layout(location = 0) in vec2 uv;
layout(location = 1) out vec4 second;
layout(location = 0) out vec4 colour;
void main() {
    vec4 c = texture(maps[COUNT - 2], uv) + lights[0] + texture(sampler2D(plain, smp), uv);
    colour = FLIP ? c : -c;
    second = c;
}
"""
SINGLE_PUSH = """#version 450
layout(push_constant) uniform Tint { vec4 tint; } pc;
layout(location = 0) out vec4 colour;
void main() { colour = pc.tint; }
"""


def compiled_blobs(lib: Path) -> dict[str, bytes]:
    """The SPIR-V of each shader above, compiled by glslang in ``lib``: name -> blob."""
    sources = {"t.vert": VERTEX, "t.frag": FRAGMENT, "push.frag": SINGLE_PUSH}
    for name, text in sources.items():
        (lib / name).write_text(text)
    requests = [CompileRequest(name, "vertex" if name.endswith(".vert") else "fragment") for name in sources]
    outputs = compile_batch(requests, lib, "capi")
    assert all(o.ok for o in outputs), [o.diagnostics for o in outputs]
    return {name: o.spirv for name, o in zip(sources, outputs)}
