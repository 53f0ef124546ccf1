"""One MaterialX text for every target: MaterialX's own generators, each under its target's guard.

A key's graph is generated three times, by the three GLSL generators of the
``materialx`` package, and the texts are joined into one source per stage:

```glsl
#version 450
// MaterialX 1.39.5: VkShaderGenerator; WgslShaderGenerator under PIPELINE_TARGET_WEBGPU; ...
#if defined(PIPELINE_TARGET_WEBGPU)
... WgslShaderGenerator: a texture2D and a sampler apart, in declarations and parameters
#elif defined(GL_ES)
... EsslShaderGenerator: GLSL ES 3.00, loose uniforms, precision, varyings by name
#else
... VkShaderGenerator, exactly as generated
#endif
```

Each generator's ``#version`` line is left out of its branch (the text's one
``#version 450`` becomes ``300 es`` on ``webgl2``), so ``vulkan1.2`` and ``metal``
compile exactly the Vulkan generator's text.  A generator that cannot make a graph
leaves an ``#error`` naming its target in that branch: that target's job fails with a
located error and the key's other targets still cook.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile

import MaterialX as mx
from MaterialX import PyMaterialXGenGlsl as mx_glsl
from MaterialX import PyMaterialXGenShader as mx_gen

from pipeline.plan.generate.mx_graph import search_path

VULKAN = "VkShaderGenerator"
GUARDED = (  # (macro, target, generator): the first guard that holds picks the branch
    ("PIPELINE_TARGET_WEBGPU", "webgpu", "WgslShaderGenerator"),
    ("GL_ES", "webgl2", "EsslShaderGenerator"),
)
STAGES = {"vertex": mx_gen.VERTEX_STAGE, "fragment": mx_gen.PIXEL_STAGE}
BLOCK = re.compile(r"\buniform\s+\w+\s*\{([^{}]*)\}\s*;")
VARYINGS = re.compile(r"layout\s*\(\s*location\s*=\s*(\d+)\s*\)\s*(in|out)\s+\w+\s*\{([^{}]*)\}\s*(\w+)\s*;")
LOCATIONS = {**{t: 1 for t in ("float", "int", "uint", "bool", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4",
                               "uvec2", "uvec3", "uvec4")}, "mat2": 2, "mat3": 3, "mat4": 4}
MEMBER = re.compile(r"^\s*(\w+)\s+(\w+)\s*(\[[^\]]*\])?\s*;\s*$")
# Written to stderr by the WGSL-ready generator for every bool uniform, which it then declares as an int.
HANDLED_WARNINGS = ("Warning: WGSL does not allow boolean types",)


def generate_stages(generator: str, shader_node: mx.Node, name: str) -> dict[str, str]:
    """Each stage's text of ``shader_node`` by the named MaterialX GLSL generator (complete interface).

    Raises what MaterialX raises when it cannot generate the graph."""
    made = getattr(mx_glsl, generator).create()
    context = mx_gen.GenContext(made)
    context.registerSourceCodeSearchPath(search_path())
    context.getOptions().shaderInterfaceType = mx_gen.ShaderInterfaceType.SHADER_INTERFACE_COMPLETE
    with _handled_warnings():
        shader = made.generate(name, shader_node, context)
    return {stage: shader.getSourceCode(mx_stage) for stage, mx_stage in STAGES.items()}


def portable_text(vulkan: str, guarded: dict[str, str | Exception]) -> str:
    """One stage's text for every target: ``vulkan`` (a generated text) and, for each generator of
    :data:`GUARDED`, its text for the stage or the error it raised."""
    head, body = _split(vulkan)
    stamp = "; ".join([f"MaterialX {mx.getVersionString()}: {VULKAN}",
                       *(f"{gen} under {macro}" for macro, _, gen in GUARDED)])
    lines = [head, f"// {stamp}"]
    for index, (macro, target, generator) in enumerate(GUARDED):
        lines.append(f"#{'el' if index else ''}if defined({macro})")
        made = guarded[generator]
        if isinstance(made, Exception):
            lines.append(f"#error {target} MaterialX {generator} cannot generate the graph because {_one_line(made)}")
        else:
            body_of = _split(made)[1]
            lines.append(for_naga(body_of) if target == "webgpu" else body_of)
    lines += ["#else", body, "#endif", ""]
    return "\n".join(lines)


def for_naga(text: str) -> str:
    """The WGSL-ready text as naga reads its SPIR-V: struct elements of blocks copied member by member
    (:func:`copied_by_member`) and the stage's varying blocks as loose varyings (:func:`loose_varyings`)."""
    return loose_varyings(copied_by_member(text))


def loose_varyings(text: str) -> str:
    """``text`` with each ``in``/``out`` interface block (``layout (location = 0) out VertexData
    {...} vd;``) declared as one varying per member, at the locations the block gave them
    (``vd_positionWorld``), and ``vd.positionWorld`` read by that name.

    naga takes no struct as a fragment input; both stages are written the same way, so their
    locations still agree.  A block with a member whose locations are not known is left as it is."""
    for block in list(VARYINGS.finditer(text)):
        location, direction, body, instance = block.groups()
        members = [MEMBER.match(m + ";") for m in body.split(";") if m.strip()]
        if not members or any(m is None or m.group(3) or m.group(1) not in LOCATIONS for m in members):
            continue
        loose, at = [], int(location)
        for member in members:
            loose.append(f"layout (location = {at}) {direction} {member.group(1)} {instance}_{member.group(2)};")
            at += LOCATIONS[member.group(1)]
        start = text.index(block.group(0))
        rest = re.sub(rf"\b{instance}\.(\w+)", rf"{instance}_\1", text[start + len(block.group(0)):])
        text = text[:start] + "\n".join(loose) + rest
    return text


def copied_by_member(text: str) -> str:
    """``text`` with each struct of a uniform block's struct array read member by member.

    A struct element of a block (``u_lightData[i]`` passed to ``sampleLightSource``) is a
    copy between the block's laid-out struct and the plain one (SPIR-V ``OpCopyLogical``),
    which naga cannot translate to WGSL; ``<array>_at(i)`` builds the plain struct from the
    element's members instead.  A struct with a member that is not a plain variable (an
    array, a nested block) is left as it is."""
    structs = dict(re.findall(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}", text))
    copies = []  # (the block's text, struct, array, its members)
    for block in BLOCK.finditer(text):
        for line in block.group(1).splitlines():
            member = MEMBER.match(line)
            if not member or not member.group(3) or member.group(1) not in structs:
                continue
            fields = [MEMBER.match(f + ";") for f in structs[member.group(1)].split(";") if f.strip()]
            if fields and all(f is not None and not f.group(3) for f in fields):
                copies.append((block.group(0), member.group(1), member.group(2), [f.group(2) for f in fields]))
    for block, kind, array, fields in copies:
        reads = ", ".join(f"{array}[i].{field}" for field in fields)
        helper = f"\n\n{kind} {array}_at(int i)\n{{\n    return {kind}({reads});\n}}"
        end = text.index(block) + len(block)
        rest = re.sub(rf"\b{array}\s*\[([^\[\]]+)\](?!\s*\.)", rf"{array}_at(\1)", text[end:])
        text = text[:end] + helper + rest
    return text


def _split(text: str) -> tuple[str, str]:
    """(the ``#version`` line, the rest) of a generated text."""
    first, _, rest = text.partition("\n")
    if not first.startswith("#version"):
        raise ValueError(f"a MaterialX text starts with {first[:40]!r}, not #version")
    return first, rest.rstrip("\n")


def _one_line(exc: Exception) -> str:
    """The words of ``exc``'s message, as an ``#error`` line shows them (glslang reads its tokens)."""
    return " ".join(re.sub(r"[^A-Za-z0-9_]+", " ", str(exc)).split()) or type(exc).__name__


@contextlib.contextmanager
def _handled_warnings():
    """Drop the warnings of :data:`HANDLED_WARNINGS` that MaterialX writes to the process's stderr;
    anything else it writes there is passed on."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to keep clean
        yield
        return
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            kept = [line for line in caught.read().decode(errors="replace").splitlines(keepends=True)
                    if not line.startswith(HANDLED_WARNINGS)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
