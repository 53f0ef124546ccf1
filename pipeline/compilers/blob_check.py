"""What a blob that did not come from this machine's compiler must prove before it is used.

A blob from the shared cache tier or a farm worker is named by its SHA-256, but a
matching digest only proves the bytes arrived as they were sent, not that they are
the output of the job that asked for them.  :func:`blob_problem` checks, in
microseconds and without running the compiler, what the job fixes:

- a SPIR-V target gets a SPIR-V module (the magic number, a whole number of words,
  a header of five words) whose entry point has the execution model of the job's
  stage, under the job's entry-point name (glslang keeps the name given);
- a GLSL text target (``webgl2``, ``es3.0``) gets UTF-8 text without NUL bytes;
- ``metal`` gets MSL text (UTF-8, no NUL bytes) declaring the stage's entry point;
- ``webgpu`` gets WGSL text (UTF-8, no NUL bytes) declaring the stage's entry point.

``validate=True`` also runs spirv-val for the job's target (SPIRV-Tools, in process),
for blobs whose origin did not already run it.
"""

from __future__ import annotations

import struct

from pipeline.compilers.request import CompileRequest, target_info

SPIRV_MAGIC = 0x07230203
OP_ENTRY_POINT = 15
# what may come before the entry points, and the entry points: OpCapability, OpExtension, OpExtInstImport,
# OpMemoryModel, OpEntryPoint (the SPIR-V specification, 2.4 "Logical Layout of a Module")
_BEFORE_FUNCTIONS = frozenset({17, 10, 11, 14, OP_ENTRY_POINT})
EXECUTION_MODELS = {"vertex": 0, "tessellation_control": 1, "tessellation_evaluation": 2, "geometry": 3,
                    "fragment": 4, "compute": 5}


def entry_points(blob: bytes) -> list[tuple[int, str]]:
    """(execution model, name) of every ``OpEntryPoint`` of a SPIR-V module (little-endian words).

    The module's logical layout puts every entry point right after its capabilities, extensions,
    instruction-set imports and memory model, so the reading stops at the first other instruction:
    a few words of a module of thousands (a module with an entry point further on is not valid)."""
    words, found, i = len(blob) // 4, [], 5
    while i < words:
        head = struct.unpack_from("<I", blob, 4 * i)[0]
        count, opcode = head >> 16, head & 0xFFFF
        if count == 0:
            raise ValueError(f"a zero-length instruction at word {i}")
        if opcode not in _BEFORE_FUNCTIONS:
            break
        if opcode == OP_ENTRY_POINT and count >= 4 and i + count <= words:
            model = struct.unpack_from("<I", blob, 4 * (i + 1))[0]
            raw = bytes(blob[4 * (i + 3):4 * (i + count)])
            found.append((model, raw.split(b"\0", 1)[0].decode("utf-8", "replace")))
        i += count
    return found


def blob_problem(request: CompileRequest, blob: bytes, *, validate: bool = False) -> str | None:
    """Why ``blob`` cannot be the output of ``request`` (None: it can)."""
    if not isinstance(blob, (bytes, bytearray)):
        return f"the blob is {type(blob).__name__}, not bytes"
    if request.backend is not None:  # a compile backend plug-in's blob: opaque here
        return None
    kind = target_info(request.target).blob
    if kind != "spirv":
        name = {"msl": "an MSL", "wgsl": "a WGSL"}.get(kind, "a GLSL")
        if b"\0" in blob:
            return f"{name} text blob holds NUL bytes"
        try:
            text = bytes(blob).decode("utf-8")
        except UnicodeDecodeError:
            return f"{name} text blob is not UTF-8"
        if kind == "msl":
            from pipeline.compilers.msl import text_problem
            return text_problem(request, text)
        if kind == "wgsl":
            from pipeline.compilers.wgsl import text_problem as wgsl_problem
            return wgsl_problem(request, text)
        return None
    if len(blob) < 20 or len(blob) % 4:
        return f"not a SPIR-V module ({len(blob)} bytes)"
    if struct.unpack_from("<I", blob)[0] != SPIRV_MAGIC:
        return "not a SPIR-V module (no SPIR-V magic number)"
    try:
        points = entry_points(bytes(blob))
    except (ValueError, struct.error) as exc:
        return f"a malformed SPIR-V module: {exc}"
    model = EXECUTION_MODELS.get(request.stage)
    if model is not None and not any(m == model for m, _ in points):
        return f"no {request.stage} entry point (entry points: {sorted(m for m, _ in points)})"
    names = {name for m, name in points if m == model}
    if model is not None and request.entry not in names and "main" not in names:
        return f"its {request.stage} entry point is {sorted(names)}, not {request.entry!r}"
    if validate:
        from pipeline.compilers.spirv_tools import validate as spirv_val

        problems = spirv_val(bytes(blob), request.target)
        if problems:
            return f"spirv-val ({request.target}): {problems[0]}"
    return None
