"""The WebGPU client: a key's ``webgpu`` blobs (WGSL text) made shader modules and a render pipeline through ``wgpu``.

The cook already had naga accept each stage alone; a render pipeline also needs the
two stages to agree (every fragment input fed by a vertex output of the same location
and type, the bind groups of both stages one layout).  :class:`WebGpuClient` makes, on
the first adapter wgpu-native finds (Mesa lavapipe on a machine without a GPU), each
key's shader modules and one render pipeline with ``layout="auto"``: vertex buffers
from the vertex stage's inputs (one buffer per location), a color target per fragment
output (a fragment stage writing none, as in a depth or shadow pass: a depth attachment),
triangles.  A WGSL blob has no reflection in the library, so the
entry point, inputs and outputs are read from the text (:func:`interface`), as a WebGPU
engine reads its own modules.  :func:`available` says why no client can run here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pipeline.compilers.naga import device as naga_device, summary
from pipeline.compilers.toolchain import ToolchainError

# reflection type -> (wgpu vertex format, bytes)
VERTEX_FORMATS = {"float": ("float32", 4), "vec2": ("float32x2", 8), "vec3": ("float32x3", 12),
                  "vec4": ("float32x4", 16), "int": ("sint32", 4), "ivec2": ("sint32x2", 8),
                  "ivec3": ("sint32x3", 12), "ivec4": ("sint32x4", 16), "uint": ("uint32", 4),
                  "uvec2": ("uint32x2", 8), "uvec3": ("uint32x3", 12), "uvec4": ("uint32x4", 16)}
# fragment output type -> a color format it can write
COLOR_FORMATS = {"float": "r32float", "vec2": "rg32float", "vec3": "rgba32float", "vec4": "rgba8unorm",
                 "int": "r32sint", "ivec2": "rg32sint", "ivec4": "rgba32sint", "uint": "r32uint",
                 "uvec2": "rg32uint", "uvec4": "rgba32uint"}


WGSL_SCALARS = {"f32": "", "i32": "i", "u32": "u"}
ITEM = re.compile(r"^((?:@\w+(?:\([^)]*\))?\s*)*)(?:(\w+)\s*:\s*)?(.+)$", re.S)


def wgsl_type(text: str) -> str:
    """A WGSL type in the reflection's words: ``vec3<f32>`` -> ``vec3``, ``u32`` -> ``uint``, ``vec2i`` -> ``ivec2``."""
    text = text.strip()
    scalar = {"f32": "float", "i32": "int", "u32": "uint"}.get(text)
    if scalar is not None:
        return scalar
    match = re.fullmatch(r"vec([234])(?:<(f32|i32|u32)>|([fiu]))", text)
    if match is None:
        return text
    kind = match.group(2) or {"f": "f32", "i": "i32", "u": "u32"}[match.group(3)]
    return f"{WGSL_SCALARS[kind]}vec{match.group(1)}"


def _split(text: str) -> list[str]:
    """Top-level comma-separated items (commas inside ``<>`` or ``()`` kept)."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _located(text: str, structs: Mapping[str, str]) -> list[dict]:
    """Each ``@location(n)`` item of a parameter list or struct body (struct-typed items opened)."""
    found = []
    for item in _split(text):
        attributes, _, kind = ITEM.match(item).groups()
        location = re.search(r"@location\(\s*(\d+)", attributes or "")
        if location is not None:
            found.append({"location": int(location.group(1)), "type": wgsl_type(kind)})
        elif kind.strip() in structs:
            found += _located(structs[kind.strip()], structs)
    return sorted(found, key=lambda v: v["location"])


def interface(text: str, stage: str) -> dict:
    """The entry point, located inputs and located outputs of a WGSL stage (the reflection's keys)."""
    structs = {m.group(1): m.group(2) for m in re.finditer(r"struct\s+(\w+)\s*\{([^}]*)\}", text)}
    entry = re.search(rf"@{stage}\s+fn\s+(\w+)\s*\(([^{{]*?)\)\s*(?:->\s*([^{{]+?))?\s*\{{", text)
    if entry is None:
        return {"entry": "main", "inputs": [], "outputs": []}
    result = (entry.group(3) or "").strip()
    return {"entry": entry.group(1), "inputs": _located(entry.group(2), structs),
            "outputs": _located(result, structs) if result else []}


# a fragment stage that writes no color (a depth or shadow pass) renders into a depth attachment
DEPTH_ONLY = {"format": "depth32float", "depth_write_enabled": True, "depth_compare": "less"}


class WebGpuUnavailable(RuntimeError):
    """wgpu cannot load or finds no adapter here (the reason in words)."""


def _device():
    try:
        return naga_device()
    except ToolchainError as exc:
        raise WebGpuUnavailable(str(exc)) from None


def available() -> str | None:
    """None when a wgpu device opens here, else why not."""
    try:
        _device()
    except WebGpuUnavailable as exc:
        return str(exc)
    return None


def vertex_buffers(reflection: Mapping) -> list[dict]:
    """One vertex buffer per input of the vertex stage, at its location (the reflection's ``inputs``)."""
    buffers = []
    for item in reflection.get("inputs", []):
        fmt, size = VERTEX_FORMATS.get(item["type"], ("float32x4", 16))
        buffers.append({"array_stride": size, "step_mode": "vertex",
                        "attributes": [{"format": fmt, "offset": 0, "shader_location": item["location"]}]})
    return buffers


def color_targets(reflection: Mapping) -> list[dict | None]:
    """A color target per fragment output location (``None`` at a location nothing writes)."""
    outputs = {item["location"]: item["type"] for item in reflection.get("outputs", [])}
    return [{"format": COLOR_FORMATS.get(outputs[i], "rgba8unorm")} if i in outputs else None
            for i in range(max(outputs, default=-1) + 1)]


class WebGpuClient:
    """The wgpu device; :meth:`create` makes a key's modules and render pipeline."""

    def __init__(self) -> None:
        self.device = _device()
        info = self.device.adapter.info
        self.name = f"{info.get('device', 'adapter')} ({info.get('backend_type', '')}) through wgpu".replace(" ()", "")

    def create(self, blobs: Mapping[str, bytes]) -> tuple[str, str] | None:
        """None when the modules and the render pipeline of a key's WGSL stages are made, else (stage or
        'pipeline', why)."""
        modules, reflections = {}, {}
        for stage in ("vertex", "fragment"):
            try:
                text = bytes(blobs[stage]).decode("utf-8")
                reflections[stage] = interface(text, stage)
                modules[stage] = self.device.create_shader_module(label=stage, code=text)
            except Exception as exc:  # noqa: BLE001 - wgpu raises GPUValidationError with naga's words
                return stage, summary(str(exc))
        vertex = {"module": modules["vertex"], "entry_point": reflections["vertex"].get("entry", "main"),
                  "buffers": vertex_buffers(reflections["vertex"])}
        fragment = {"module": modules["fragment"], "entry_point": reflections["fragment"].get("entry", "main"),
                    "targets": color_targets(reflections["fragment"])}
        try:
            self.device.create_render_pipeline(layout="auto", vertex=vertex, fragment=fragment,
                                               primitive={"topology": "triangle-list"}, depth_stencil=None
                                               if any(fragment["targets"]) else DEPTH_ONLY)
        except Exception as exc:  # noqa: BLE001 - a refused pipeline is a result
            return "pipeline", summary(str(exc))
        return None
