"""The ``webgpu`` target's check: naga (inside wgpu-native, through the ``wgpu`` package) accepts the WGSL.

A ``webgpu`` job compiles and validates SPIR-V exactly as ``vulkan1.2`` does, naga-wasm
translates it to WGSL (:mod:`pipeline.compilers.wgsl`), and the WGSL goes to
``GPUDevice.createShaderModule`` of a ``wgpu`` device (Mesa lavapipe on a machine without
a GPU).  wgpu-native parses it with naga's WGSL front end, the one a browser's WebGPU
(Firefox) runs, and validates it against WebGPU's rules: what WebGPU cannot express is
refused here, as a located error of the ``webgpu`` target alone.  What naga cannot
translate from SPIR-V (a combined image sampler, a matrix varying) is refused one step
earlier, by the translator; :data:`COMBINED` says what to write instead.

:func:`identity` (the ``wgpu`` package and its wgpu-native build) is in every ``webgpu``
job key, beside the translator's.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import struct
import tempfile

from pipeline.compilers.toolchain import ToolchainError


class NagaError(ValueError):
    """naga refused a module for WebGPU (its message, without wgpu-native's frames)."""


@functools.cache
def _wgpu():
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())  # wgpu-native's Vulkan loader asks for one
    try:
        import wgpu
    except ImportError as exc:
        raise ToolchainError(f"the webgpu target needs the wgpu package (pip install '.[runtime]'): {exc}",
                             "wgpu") from None
    logging.getLogger("wgpu").setLevel(logging.ERROR)  # naga's warnings (a decoration it skips) are not errors
    return wgpu


_DEVICES: dict[int, object] = {}  # process id -> its device


def device():
    """A wgpu device of this process (created once per process: a forked compile worker makes its own rather
    than use its parent's, whose driver threads did not come along): the first adapter wgpu-native finds."""
    pid = os.getpid()
    if pid not in _DEVICES:
        _DEVICES.clear()
        wgpu = _wgpu()
        try:
            adapter = wgpu.gpu.request_adapter_sync(power_preference="low-power")
            _DEVICES[pid] = adapter.request_device_sync()
        except Exception as exc:  # noqa: BLE001 - no adapter is a missing tool, not a shader error
            raise ToolchainError(f"the webgpu target needs a wgpu adapter (Mesa lavapipe): {exc}", "wgpu") from None
    return _DEVICES[pid]


@functools.cache
def identity() -> str:
    """The naga that checks: the wgpu package and the wgpu-native build it carries."""
    wgpu = _wgpu()
    import wgpu.backends.wgpu_native as native
    return f"wgpu {wgpu.__version__}; wgpu-native {getattr(native, '__version__', 'unknown')}"


def summary(message: str) -> str:
    """naga's message in one line: its errors and notes, without source frames or repeats."""
    kept: list[str] = []
    for line in message.splitlines():
        text = line.strip()
        if not text or text.startswith(("│", "┌", "└")) or re.match(r"^\d+\s*│", text):
            continue
        text = text.lstrip("= ").strip()
        if text in ("Caused by:", "Validation Error") or text.startswith("In wgpuDeviceCreate") or text in kept:
            continue
        kept.append(text)
    return "; ".join(kept) or "rejected"


OP_TYPE_SAMPLED_IMAGE, OP_TYPE_POINTER, OP_VARIABLE = 27, 32, 59
COMBINED = "WebGPU has no combined image samplers (sampler2D): declare a texture and a sampler apart"
# an HLSL cbuffer packs a float3 right after a float (offset 20), which no WGSL uniform struct can hold
UNIFORM_ALIGNMENT = ("WGSL aligns uniform vec3/vec4 members to 16 bytes, vec2 to 8: "
                     "write a float3 after a float as three floats")


def hint(message: str, spirv: bytes) -> str:
    """What to write instead, for the refusals a GLSL or HLSL author meets most (empty when none applies)."""
    if declares_combined_sampler(spirv):
        return f" ({COMBINED})"
    if "Alignment requirements for address space Uniform" in message:
        return f" ({UNIFORM_ALIGNMENT})"
    return ""


def declares_combined_sampler(spirv: bytes) -> bool:
    """True when the module declares a variable of a combined image sampler type (a GLSL ``sampler2D`` and
    kin), which naga's SPIR-V front end does not take (a sampled image made in a function body, as HLSL's
    ``Texture2D.Sample`` makes one, is not such a variable)."""
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv[: len(spirv) // 4 * 4])
    sampled: set[int] = set()
    pointers: set[int] = set()
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        operands = words[i + 1:i + count]
        if opcode == OP_TYPE_SAMPLED_IMAGE and operands:
            sampled.add(operands[0])
        elif opcode == OP_TYPE_POINTER and len(operands) >= 3 and operands[2] in sampled:
            pointers.add(operands[0])
        elif opcode == OP_VARIABLE and operands and operands[0] in pointers:
            return True
        i += max(count, 1)
    return False


def check(wgsl: str, label: str = "") -> None:
    """Raise :class:`NagaError` when naga (wgpu-native's WGSL front end and validator) refuses the WGSL."""
    dev = device()
    try:
        dev.create_shader_module(label=label, code=wgsl)
    except Exception as exc:  # noqa: BLE001 - wgpu raises GPUValidationError (or a panic's RuntimeError)
        raise NagaError(summary(str(exc))) from None
