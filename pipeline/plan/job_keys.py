"""A stage job's cache key: the whole command hashed (see :mod:`pipeline.plan.jobs` for what it holds).

:func:`job_key` names a job by its source closure and defines; :func:`exact_key` by its
preprocessed text (and those of the stages it is linked with).  Flags that are not set
are left out, so adding one keeps every older job key unchanged.  ``options`` is the
plan's :class:`~pipeline.plan.jobs.JobOptions` (its ``compiler`` identity is in every key).
"""

from __future__ import annotations

from pipeline.cache.store import FORMAT_VERSION
from pipeline.compilers import CompileRequest, spirv_tools
from pipeline.compilers.request import BINDING_BASE, target_info
from pipeline.compilers.targets import finisher_identity
from pipeline.digest import bytes_hash, stable_hash
from pipeline.plan.links import link_identity, linked_text_identity


def _flags(request: CompileRequest) -> dict:
    """The target flags of a request that are set (absent ones keep older job keys unchanged).

    The optimizer is named when it runs (``-O``, or the removal of unused interface variables of
    ``auto_map`` on SPIR-V); an HLSL request names its register shifts; a linked stage names the
    stages it links with (:func:`pipeline.plan.jobs._linked`); a ``metal`` or ``webgpu`` request names the tool
    that finishes its blob (SPIRV-Cross's build; naga-wasm and its driver, and the wgpu-native whose naga checks) and
    ``metal`` its MSL options; a target that defines macros (``webgpu``) names them."""
    extra = {name: getattr(request, name) for name in ("relaxed", "auto_map", "version") if getattr(request, name)}
    spirv = request.backend is None and target_info(request.target).is_spirv  # a plug-in target: its own
    if request.backend is None and target_info(request.target).macros:  # webgpu: PIPELINE_TARGET_WEBGPU
        extra["macros"] = [list(m) for m in target_info(request.target).macros]
    if request.auto_map:
        extra["binding_base"] = BINDING_BASE[request.stage]
    if spirv and (request.optimize or request.auto_map):
        extra["optimizer"] = spirv_tools.optimizer_version()
    if spirv and request.language == "hlsl":
        extra["registers"] = [list(r) for r in request.registers]
    if request.link:
        extra["link"] = link_identity(request)
    finisher = finisher_identity(request.target) if request.backend is None else None
    if finisher is not None:  # metal, webgpu: the tool after spirv-val, and the MSL options
        extra["finisher"] = finisher
    if request.backend is None and target_info(request.target).finish == "msl":
        extra["msl"] = {"version": request.msl_version, "argument_buffers": request.argument_buffers}
    if request.plugins:  # the code and version of each plug-in the job went through, and the text it made
        extra["plugins"] = [list(p) for p in request.plugins]
        extra["text"] = bytes_hash(request.text.encode()) if request.text is not None else None
    return extra


def exact_key(request: CompileRequest, text: str, options, linked: tuple[str, ...] = ()) -> str:
    """The job key of a request by its preprocessed text and those of the stages it links with
    (``linked``, in ``request.link`` order; see the module doc)."""
    extra = _flags(request)
    if request.link:
        extra["link"] = linked_text_identity(request, linked)
    return stable_hash(extra | {
        "format": FORMAT_VERSION, "preprocessed": bytes_hash(text.encode()), "stage": request.stage,
        "language": request.language, "entry": request.entry, "target": request.target,
        "optimize": request.optimize, "compiler": options.compiler})


def job_key(request: CompileRequest, closure, options) -> str:
    """The job key of a request by its source closure and defines."""
    extra = _flags(request)
    if request.problems:
        extra["problems"] = [d.to_json() for d in request.problems]
    return stable_hash(extra | {
        "format": FORMAT_VERSION,
        "source": request.source,
        "stage": request.stage,
        "language": request.language,
        "entry": request.entry,
        "defines": [list(d) for d in request.defines],
        "target": request.target,
        "optimize": request.optimize,
        "closure": [list(c) for c in closure],
        "compiler": options.compiler,
    })
