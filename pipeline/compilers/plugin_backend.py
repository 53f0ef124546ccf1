"""A compile backend plug-in run on one job, wherever the job compiles (this process, a pool
worker, a Dask worker: each loads the plug-in from the request's spec once).

The plug-in is given a :class:`~pipeline.compilers.plugins.BackendJob` (the stage text after
its family's transforms, the projected defines, the target's options, the closure's files)
and must return a :class:`~pipeline.compilers.plugins.BackendResult`.  An exception, or an
answer of another shape (a blob that is not bytes, a diagnostic that is not a
:class:`~pipeline.errors.Diagnostic`), is one located error at the plug-in's own line
naming it; the cook names the key whose job it was.
"""

from __future__ import annotations

import inspect
import traceback
from pathlib import Path

from pipeline.compilers.plugins import BackendJob, BackendResult, PluginError, load
from pipeline.compilers.request import CompileOutput, CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.errors import CompileError, Diagnostic, Location


def compile_with_plugin(request: CompileRequest, tree: SourceTree) -> CompileOutput:
    """Compile ``request`` with the compile backend plug-in it names (``request.backend``)."""
    name, _, code = request.plugins[-1] if request.plugins else (request.backend, "", "")
    try:
        backend = load(request.backend, code)
    except PluginError as exc:
        return CompileOutput(None, (Diagnostic(Location(tree.name(request.source)), f"compile backend '{name}': {exc}"),))
    try:
        job = _job(request, tree)
    except CompileError as exc:
        return CompileOutput(None, tuple(exc.diagnostics))
    file = _file(request.backend, backend)
    try:
        result = backend.compile(job)
    except Exception as exc:  # the plug-in's own code
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()) == file]
        where = Location(file, frames[-1].lineno, 1) if frames else _defined_at(file, backend)
        return CompileOutput(None, (Diagnostic(where, f"compile backend '{name}' raised {type(exc).__name__}: {exc}"),))
    problem = _garbage(result)
    if problem:
        return CompileOutput(None, (Diagnostic(_defined_at(file, backend), f"compile backend '{name}' returned {problem}"),))
    diagnostics = tuple(result.diagnostics)
    if result.blob is None and not any(d.severity == "error" for d in diagnostics):
        diagnostics += (Diagnostic(Location(tree.name(request.source)),
                                   f"compile backend '{name}' failed without a message"),)
    blob = bytes(result.blob) if result.blob is not None and not any(d.severity == "error" for d in diagnostics) else None
    return CompileOutput(blob, diagnostics)


def _job(request: CompileRequest, tree: SourceTree) -> BackendJob:
    files = tree.files(request.source) if tree.has_file(request.source) else ()
    includes = {rel: tree.read(rel) for rel in files}
    text = request.text if request.text is not None else tree.read(request.source)
    options = {"optimize": request.optimize, "relaxed": request.relaxed, "auto_map": request.auto_map,
               "version": request.version}
    return BackendJob(tree.name(request.source), text, request.stage, request.entry, request.language,
                      request.target, tuple(request.defines), options, includes)


def _garbage(result) -> str | None:
    if not isinstance(result, BackendResult):
        return f"{type(result).__name__}, not BackendResult"
    if result.blob is not None and not isinstance(result.blob, (bytes, bytearray)):
        return f"a blob of type {type(result.blob).__name__}, not bytes"
    if not isinstance(result.diagnostics, (tuple, list)) or not all(isinstance(d, Diagnostic) for d in result.diagnostics):
        return "diagnostics that are not a sequence of Diagnostic"
    return None


def _file(spec: str, backend) -> str:
    module_part = spec.rpartition(":")[0]
    if module_part.endswith(".py"):
        return str(Path(module_part).resolve())
    try:
        return inspect.getsourcefile(type(backend)) or module_part
    except TypeError:
        return module_part


def _defined_at(file: str, backend) -> Location:
    try:
        return Location(file, inspect.getsourcelines(backend.compile)[1], 1)
    except (TypeError, OSError, AttributeError):
        return Location(file)
