"""Backend selection and the batch entry point a worker process runs.

JobRunner identity: every backend has an ``identity`` string naming the
compiler, its version and the SPIRV-Tools version, e.g.
``'glslang 13.1.1 (C API); SPIRV-Tools v2025.5 <commit>'`` or
``'glslangValidator 13.1.1; SPIRV-Tools v2025.5 <commit>'``.  It is part of
every job's cache key, so upgrading either wheel, or switching backend,
recompiles.  (The two backends give the same SPIR-V semantics but not always the
same bytes, hence distinct identities.)
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Protocol

from pipeline.compilers.glslang_capi import GlslangCapiBackend
from pipeline.compilers.glslang_cli import GlslangCliBackend
from pipeline.compilers.request import CompileOutput, CompileRequest, target_info
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import SpirvToolsError, optimize, validate
from pipeline.compilers.targets import finish_output
from pipeline.compilers.toolchain import ToolchainError
from pipeline.errors import CompileError, Diagnostic, Location
from pipeline.structs import replace

BACKENDS = {"capi": GlslangCapiBackend, "cli": GlslangCliBackend}


class Backend(Protocol):
    """A shader compiler: GLSL/HLSL source in, SPIR-V plus located diagnostics out."""

    name: str
    identity: str

    def compile(self, request: CompileRequest, tree: SourceTree) -> CompileOutput: ...


class BackendError(ToolchainError):
    """An unknown backend name, or a backend that cannot run here."""


@functools.cache
def select_backend() -> tuple[Backend, str | None]:
    """The C API backend if its libraries load, else the CLI one plus the reason why."""
    try:
        return GlslangCapiBackend(), None
    except (ToolchainError, OSError) as exc:
        return GlslangCliBackend(), f"glslang C API unavailable ({exc}); using glslangValidator"


def default_backend() -> Backend:
    """The backend to use when none is configured (see :func:`select_backend` for why)."""
    return select_backend()[0]


@functools.cache
def get_backend(name: str) -> Backend:
    """A backend by name ('capi', 'cli' or 'auto'), created once per process."""
    if name == "auto":
        return default_backend()
    try:
        return BACKENDS[name]()
    except KeyError:
        raise BackendError(f"unknown compiler backend {name!r} (known: auto, {', '.join(BACKENDS)})") from None


@functools.lru_cache(maxsize=8)
def _tree(root: Path, allowed: tuple[Path, ...]) -> SourceTree:
    return SourceTree(root, allowed)


def _error(request: CompileRequest, tree: SourceTree, message: str) -> Diagnostic:
    return Diagnostic(Location(tree.name(request.source)), message)


def _finish(output: CompileOutput, request: CompileRequest, tree: SourceTree) -> CompileOutput:
    """Optimize when asked, then validate: a blob that fails spirv-val is an error, not an output.

    A GLSL ES blob (webgl2) was validated by glslang's ES front end already."""
    if not target_info(request.target).is_spirv:
        return output
    spirv = output.spirv
    try:
        spirv = optimize(spirv, request.target) if request.optimize else spirv
    except SpirvToolsError as exc:
        return CompileOutput(None, output.diagnostics + (_error(request, tree, str(exc)),))
    problems = validate(spirv, request.target)
    if problems:
        found = tuple(_error(request, tree, f"spirv-val: {p}") for p in problems)
        return CompileOutput(None, output.diagnostics + found)
    return CompileOutput(spirv, output.diagnostics)


def compile_one(request: CompileRequest, tree: SourceTree, backend: Backend) -> CompileOutput:
    """Compile, optimize if asked and validate one request; shader errors become diagnostics."""
    if request.problems:
        return CompileOutput(None, request.problems)
    if request.backend is not None:  # a target of a compile backend plug-in
        from pipeline.compilers.plugin_backend import compile_with_plugin
        return compile_with_plugin(request, tree)
    try:  # the closure is read first: a file that cannot be read fails this job alone
        missing = tree.include_errors(request.source) if request.text is None else ()
        if missing:
            return CompileOutput(None, missing)
        output = backend.compile(request, tree)
    except CompileError as exc:
        return CompileOutput(None, tuple(exc.diagnostics))
    if output.spirv is None:
        return _named(output, request)
    return _named(finish_output(_finish(output, request, tree), request, tree), request)


def _named(output: CompileOutput, request: CompileRequest) -> CompileOutput:
    """The output with glslang's messages for a GLSL ES text target naming it (``webgl2: ...``), as a
    finished target's messages do (``webgpu: ...``); the messages of other targets unchanged."""
    if target_info(request.target).blob != "glsl" or not output.diagnostics:
        return output
    named = tuple(replace(d, message=f"{request.target}: {d.message}") for d in output.diagnostics)
    return replace(output, diagnostics=named)


def compile_batch(requests: list[CompileRequest], root: Path, backend_name: str = "capi",
                  allowed: tuple[Path, ...] = ()) -> list[CompileOutput]:
    """Compile a batch in this process: what a pool worker runs (top-level, picklable).

    The source tree and backend are built once per process and reused by every
    later batch; outputs come back in request order.  Never raises for a shader
    error (those are diagnostics, naming files by their absolute paths); a missing compiler is a
    :class:`ToolchainError`.  ``allowed``: folders besides ``root`` that sources may lead to through symlinks.
    """
    tree = _tree(Path(root).resolve(), tuple(allowed))
    backend = get_backend(backend_name)
    return [_timed(request, tree, backend) for request in requests]


def _timed(request: CompileRequest, tree: SourceTree, backend: Backend) -> CompileOutput:
    start = time.perf_counter()
    output = compile_one(request, tree, backend)
    return replace(output, seconds=time.perf_counter() - start)
