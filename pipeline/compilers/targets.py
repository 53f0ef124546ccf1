"""The last step of a ``metal`` or ``webgpu`` job: its validated SPIR-V finished for its platform.

:func:`finish_output` runs after spirv-val (``compilers/backends.py``): a ``metal``
request's module becomes MSL text (:mod:`pipeline.compilers.msl`), a ``webgpu``
request's module becomes WGSL text by naga-wasm (:mod:`pipeline.compilers.wgsl`), which
naga inside wgpu must then accept (:mod:`pipeline.compilers.naga`).  What a
target cannot express is a located error of that target's job only: the same key's
other targets still compile.  :func:`finisher_identity` names the tool that finished a
job in its job key.
"""

from __future__ import annotations

from pipeline.compilers.request import CompileOutput, CompileRequest, target_info
from pipeline.compilers.sources import SourceTree
from pipeline.errors import Diagnostic, Location


def finisher_identity(target: str) -> str | None:
    """The tool that finishes a target's blobs (for the job key), None when the target has none."""
    finish = target_info(target).finish
    if finish == "msl":
        from pipeline.compilers.msl import identity
        return identity()
    if finish == "naga":
        from pipeline.compilers import naga, wgsl
        return f"{wgsl.identity()}; {naga.identity()}"
    return None


def finish_output(output: CompileOutput, request: CompileRequest, tree: SourceTree) -> CompileOutput:
    """The compiled and validated output finished for its target (unchanged for a target with no finish)."""
    finish = target_info(request.target).finish
    if finish is None or output.spirv is None:
        return output
    if finish == "msl":
        from pipeline.compilers.msl import TranslateError, to_msl
        try:
            return CompileOutput(to_msl(output.spirv, request), output.diagnostics)
        except TranslateError as exc:
            return _failed(output, request, tree, f"metal: {exc}")
    return _webgpu(output, request, tree)


def _webgpu(output: CompileOutput, request: CompileRequest, tree: SourceTree) -> CompileOutput:
    """The WGSL of a ``webgpu`` job: naga-wasm's translation of the SPIR-V, accepted by wgpu's naga."""
    from pipeline.compilers.naga import NagaError, check, hint
    from pipeline.compilers.wgsl import TranslateError, text_problem, to_wgsl
    try:
        text = to_wgsl(output.spirv)
    except TranslateError as exc:
        why = f"{exc}{hint(str(exc), output.spirv)}"
        return _failed(output, request, tree, f"webgpu: naga cannot translate the SPIR-V to WGSL: {why}")
    problem = text_problem(request, text)
    if problem is not None:
        return _failed(output, request, tree, f"webgpu: {problem}")
    try:
        check(text, f"{request.source}:{request.stage}")
    except NagaError as exc:
        return _failed(output, request, tree, f"webgpu: naga refuses the WGSL: {exc}")
    return CompileOutput(text.encode(), output.diagnostics)


def _failed(output: CompileOutput, request: CompileRequest, tree: SourceTree, message: str) -> CompileOutput:
    return CompileOutput(None, output.diagnostics + (Diagnostic(Location(tree.name(request.source)), message),))
