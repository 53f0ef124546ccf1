"""What SPIRV-Cross says about a SPIR-V blob (``spirv-cross --reflect``), in this project's shape.

What an engine needs to build a pipeline from a blob without parsing SPIR-V itself:
descriptor bindings (set, binding, kind, array count, block size), stage inputs and
outputs (location, GLSL type; a Vulkan format for vertex inputs), push-constant blocks
and specialization constants (id, type, default).  Lists are sorted, so the same blob
gives the same JSON on every run.

SPIRV-Cross runs in this process through its C API where its library loads
(:mod:`pipeline.compilers.spirv_cross_capi`, Debian's ``libspirv-cross-c-shared0``), else as the
command (Debian's ``spirv-cross``), one process per blob; both are installed by ``script/bootstrap``
and give the same bytes.  Without either, :func:`reflect` raises :class:`ReflectionError` naming what
to install.  It runs where a
blob is made (a build-farm worker reflects what it compiles, :mod:`pipeline.compile.farm_worker`)
or where the outputs need it (:mod:`pipeline.outputs.reflection`, which keeps the results in
the store, :mod:`pipeline.compilers.reflection_records`, by blob digest and tool revision).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile

import orjson

from pipeline.compilers import spirv_cross_capi
from pipeline.errors import PipelineError

SPIRV_MAGIC = b"\x03\x02\x23\x07"  # how a SPIR-V module's bytes start (little-endian 0x07230203)


# GLSL type -> (Vulkan format, size in bytes) for vertex inputs.
_SCALAR = {"float": "SFLOAT", "int": "SINT", "uint": "UINT"}
_VECTORS = {"": 1, "2": 2, "3": 3, "4": 4}
VERTEX_FORMATS: dict[str, tuple[str, int]] = {}
for _prefix, _kind in (("", "SFLOAT"), ("i", "SINT"), ("u", "UINT")):
    for _n in (2, 3, 4):
        VERTEX_FORMATS[f"{_prefix}vec{_n}"] = ("_".join(["R32G32B32A32"[: 3 * _n]]) + f"_{_kind}", 4 * _n)
for _name, _kind in _SCALAR.items():
    VERTEX_FORMATS[_name] = (f"R32_{_kind}", 4)

_KINDS = {  # spirv-cross resource list -> Vulkan descriptor type
    "ubos": "uniform_buffer", "ssbos": "storage_buffer", "textures": "combined_image_sampler",
    "separate_images": "sampled_image", "separate_samplers": "sampler", "images": "storage_image",
    "subpass_inputs": "input_attachment", "acceleration_structures": "acceleration_structure",
}


class ReflectionError(PipelineError):
    """A blob cannot be reflected (tool missing or failing)."""


@functools.cache
def tool() -> str:
    found = shutil.which("spirv-cross")
    if found is None:
        raise ReflectionError.at("spirv-cross", "SPIRV-Cross is not installed (neither its library, Debian package "
                                                "'libspirv-cross-c-shared0', nor the command, Debian package "
                                                "'spirv-cross'); it reflects the cooked blobs")
    return found


@functools.cache
def tool_version() -> str:
    """SPIRV-Cross's revision (in every stored reflection's key): the library's where it loads, else the command's."""
    library = spirv_cross_capi.load()
    if library is not None:
        return library.revision()
    run = subprocess.run([tool(), "--revision"], capture_output=True, text=True)
    return (run.stdout or run.stderr).strip() or "unknown"


def reflect(spirv: bytes) -> dict:
    """The reflection document of one SPIR-V blob."""
    library = spirv_cross_capi.load()
    if library is None:
        return normalize(orjson.loads(reflect_command(spirv)))
    try:
        return normalize(orjson.loads(library.reflect_json(spirv)))
    except spirv_cross_capi.CrossError as exc:
        raise ReflectionError.at("spirv-cross", f"cannot reflect a blob: {exc}") from None


def reflect_command(spirv: bytes) -> bytes:
    """``spirv-cross --reflect``'s JSON of one blob, by the command."""
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(spirv)
        f.flush()
        run = subprocess.run([tool(), f.name, "--reflect", "--output", "/dev/stdout"], capture_output=True)
    if run.returncode != 0:
        raise ReflectionError.at("spirv-cross", f"cannot reflect a blob: {run.stderr.decode(errors='replace').strip()}")
    return run.stdout


def normalize(raw: dict) -> dict:
    """spirv-cross's JSON in this project's shape (documented in docs/formats.md)."""
    entry = (raw.get("entryPoints") or [{}])[0]
    stage = {"vert": "vertex", "frag": "fragment"}.get(entry.get("mode"), entry.get("mode"))
    inputs = [_io(v, stage == "vertex") for v in raw.get("inputs", []) if "location" in v]
    outputs = [_io(v, False) for v in raw.get("outputs", []) if "location" in v]
    descriptors = [_descriptor(kind, v) for list_name, kind in _KINDS.items() for v in raw.get(list_name, [])]
    push = [{"name": v.get("name", ""), "size": _block_size(raw, v)} for v in raw.get("push_constants", [])]
    spec = [{"id": v["id"], "name": v.get("name", ""), "type": v.get("type"), "default": v.get("default_value")}
            for v in raw.get("specialization_constants", [])]
    return {
        "entry": entry.get("name", "main"), "stage": stage,
        "inputs": sorted(inputs, key=lambda v: v["location"]),
        "outputs": sorted(outputs, key=lambda v: v["location"]),
        "descriptors": sorted(descriptors, key=lambda d: (d["set"], d["binding"])),
        "push_constants": sorted(push, key=lambda p: p["name"]),
        "specialization_constants": sorted(spec, key=lambda s: s["id"]),
    }


def _io(v: dict, vertex_input: bool) -> dict:
    doc = {"location": v["location"], "name": v.get("name", ""), "type": v["type"]}
    if vertex_input and v["type"] in VERTEX_FORMATS:
        doc["format"], doc["size"] = VERTEX_FORMATS[v["type"]]
    return doc


def _descriptor(kind: str, v: dict) -> dict:
    count = 1
    for n in v.get("array", []):
        count *= n  # 0: a runtime-sized array
    doc = {"set": v.get("set", 0), "binding": v.get("binding", 0), "kind": kind, "name": v.get("name", ""),
           "count": count}
    if "block_size" in v:
        doc["block_size"] = v["block_size"]
    elif not kind.endswith("_buffer"):
        doc["type"] = v.get("type", "")  # sampler2D, samplerCube, image2D ... (buffers: a block, named)
    return doc


def _block_size(raw: dict, v: dict) -> int | None:
    """A block's size in bytes: spirv-cross's when it gives one, else the end of its last member
    (None when a member's type is one this module cannot size)."""
    if "block_size" in v:
        return v["block_size"]
    return _struct_size(raw, v.get("type"), align=False)


_SCALAR_BYTES = {"float": 4, "int": 4, "uint": 4, "bool": 4, "double": 8, "int64_t": 8, "uint64_t": 8,
                 "float16_t": 2, "int16_t": 2, "uint16_t": 2, "int8_t": 1, "uint8_t": 1}
_VECTOR = re.compile(r"^(|i|u|b|d)(vec|mat)([234])(?:x([234]))?$")


def _struct_size(raw: dict, type_name, *, align: bool = True) -> int | None:
    """The end of a struct's last member (with ``align``, rounded up to the struct's alignment, as a
    member of another block or an array element is laid out)."""
    members = raw.get("types", {}).get(type_name, {}).get("members", [])
    if not members:
        return None
    end, alignment = 0, 4
    for m in members:
        size, member_alignment = _member_size(raw, m)
        if size is None:
            return None
        end, alignment = max(end, m.get("offset", 0) + size), max(alignment, member_alignment)
    return -(-end // alignment) * alignment if align else end


def _member_size(raw: dict, m: dict) -> tuple[int | None, int]:
    """(bytes, alignment) of one block member, arrays included."""
    count = 1
    for n in m.get("array", []):
        count *= n or 1
    if m.get("array") and m.get("array_stride"):
        return m["array_stride"] * count, 16 if m["array_stride"] % 16 == 0 else 4
    name = m.get("type", "")
    if name in _SCALAR_BYTES:
        return _SCALAR_BYTES[name] * count, _SCALAR_BYTES[name]
    shape = _VECTOR.match(name)
    if shape is None:
        size = _struct_size(raw, name)
        return (size * count if size is not None else None), 16
    scalar = 8 if shape.group(1) == "d" else 4
    kind, n = shape.group(2), int(shape.group(3))
    if kind == "vec":
        return scalar * n * count, scalar * (4 if n == 3 else n)
    columns = n
    stride = m.get("matrix_stride") or scalar * 4
    return stride * columns * count, stride


def dump(doc: dict) -> bytes:
    """A reflection document's canonical bytes (sorted keys, compact)."""
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
