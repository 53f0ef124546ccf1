"""What a compile is asked to do and what it gives back.

Targets: ``vulkan1.0``-``vulkan1.3`` name a Vulkan environment; the SPIR-V version
follows Vulkan's own pairing.  The default, ``vulkan1.2``, produces SPIR-V 1.5 (the
newest version every Vulkan 1.2 driver must accept) and is validated under Vulkan
1.2 rules.  ``opengl4.5`` produces SPIR-V 1.0 under OpenGL semantics
(ARB_gl_spirv), validated as ``opengl4.5``.  ``webgl2`` (alias ``es3.0``) produces
no SPIR-V: the blob is the preprocessed GLSL ES text (defines and includes
resolved, ``#version`` first), validated by glslang's ES front end, which is what a
WebGL 2 or GLES 3 runtime loads.

Per request: ``relaxed`` compiles under glslang's relaxed Vulkan rules (loose
uniforms gathered in a default uniform block), ``auto_map`` assigns bindings (from
:data:`BINDING_BASE` of the stage on SPIR-V targets) and input/output locations, and ``version`` (``"300 es"``, ``"450"``) is the
``#version`` of a source that has none.

HLSL on a SPIR-V target: each register class is shifted by its entry of ``registers``
(:data:`DEFAULT_REGISTERS`: ``b`` +0, ``t`` +32, ``s`` +64, ``u`` +96), so ``register(b0)``,
``register(t0)`` and ``register(s0)`` are three bindings; ``register(t0, space1)`` is set 1.

``metal`` and ``webgpu`` compile to SPIR-V for the Vulkan 1.2 environment (validated by
spirv-val as ``vulkan1.2``), then finish for their platform (``Target.finish``,
:mod:`pipeline.compilers.targets`): ``metal`` translates it to MSL text with SPIRV-Cross
(``msl_version``, ``argument_buffers``); ``webgpu`` translates it to WGSL text with naga
(naga-wasm), which naga inside ``wgpu`` then accepts for WebGPU.

Target macros: a ``webgpu`` compile defines ``PIPELINE_TARGET_WEBGPU`` (1) before the
request's defines, so one source can declare what WGSL needs (a texture and a sampler
apart); it compiles under Vulkan semantics, so glslang's ``VULKAN`` is defined too.  An
ES target needs none: glslang defines ``GL_ES``.  No other target defines a macro.

``link``: an ``auto_map`` stage on a SPIR-V target carries the other stage of its
program (a vertex stage its fragment stage and the reverse): see
:mod:`pipeline.compilers.interfaces`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

from pipeline.errors import Diagnostic
from pipeline.structs import replace

STAGES = ("vertex", "fragment", "compute")
# auto_map on a SPIR-V target: each stage's bindings start here, so two stages never share one
# (relaxed rules give every stage its own default uniform block)
BINDING_BASE = {"vertex": 0, "fragment": 16, "compute": 0}
LANGUAGES = ("glsl", "hlsl")
# HLSL register class -> the glslang resource types (glslang_resource_type_t) it names:
# s samplers; t textures and structured buffers; u storage images and UAVs; b constant buffers
REGISTER_CLASSES = {"b": (3,), "t": (1, 4), "s": (0,), "u": (2, 5)}
# each class its own range, so b0, t0 and s0 never share a binding (a CompileTarget's ``registers`` replaces it)
DEFAULT_REGISTERS = (("b", 0), ("t", 32), ("s", 64), ("u", 96))


class Target(msgspec.Struct, frozen=True):
    """A compile target: client API and version, the SPIR-V version it implies, and glslang's codes."""

    name: str            # 'vulkan1.2': --target-env of glslangValidator and spirv-val
    spirv: tuple[int, int] | None  # None: the blob is GLSL text
    client_version: int  # glslang_target_client_version_t
    spirv_version: int   # glslang_target_language_version_t
    client: str = "vulkan"  # 'vulkan' | 'opengl' | 'none'
    default_version: str = "100"  # #version of a source without one when the request gives none
    finish: str | None = None  # after spirv-val: 'msl' (SPIRV-Cross to MSL text) or 'naga' (naga to WGSL text)
    macros: tuple[tuple[str, str], ...] = ()  # defined before the request's own defines (TARGET_MACROS)

    @property
    def is_spirv(self) -> bool:
        """True when glslang compiles to SPIR-V (the blob may still be translated: :attr:`blob`)."""
        return self.spirv is not None

    @property
    def blob(self) -> str:
        """What the blob is: ``spirv``, ``glsl`` (GLSL ES text), ``msl`` (Metal Shading Language text) or
        ``wgsl`` (WebGPU Shading Language text)."""
        return {"msl": "msl", "naga": "wgsl"}.get(self.finish or "", "spirv" if self.is_spirv else "glsl")


def _target(name: str, vulkan_minor: int, spirv_minor: int) -> Target:
    return Target(name, (1, spirv_minor), (1 << 22) | (vulkan_minor << 12), (1 << 16) | (spirv_minor << 8))


TARGETS = {
    "vulkan1.0": _target("vulkan1.0", 0, 0),
    "vulkan1.1": _target("vulkan1.1", 1, 3),
    "vulkan1.2": _target("vulkan1.2", 2, 5),
    "vulkan1.3": _target("vulkan1.3", 3, 6),
    "opengl4.5": Target("opengl4.5", (1, 0), 450, 1 << 16, "opengl", "450"),
    "webgl2": Target("webgl2", None, 0, 0, "none", "300 es"),
    "es3.0": Target("es3.0", None, 0, 0, "none", "300 es"),
    "metal": replace(_target("vulkan1.2", 2, 5), finish="msl"),
    "webgpu": replace(_target("vulkan1.2", 2, 5), finish="naga", macros=(("PIPELINE_TARGET_WEBGPU", "1"),)),
}
MSL_VERSION = re.compile(r"^([1-3])\.([0-9])$")
DEFAULT_MSL_VERSION = "2.1"
VERSION_TEXT = re.compile(r"^([1-9][0-9]{2})(?: (es|core|compatibility))?$")


def parse_version(text: str) -> tuple[int, str | None]:
    """``'300 es'`` -> ``(300, 'es')``; raises :class:`RequestError` for anything else."""
    match = VERSION_TEXT.match(text or "")
    if not match:
        raise RequestError(f"bad GLSL version {text!r} (e.g. '300 es', '310 es', '450')")
    return int(match.group(1)), match.group(2)


class RequestError(ValueError):
    """A compile request names an unknown stage, language or target (a bug in the caller)."""


def target_info(name: str) -> Target:
    """The :class:`Target` for a name such as ``'vulkan1.2'``."""
    try:
        return TARGETS[name]
    except KeyError:
        raise RequestError(f"unknown target {name!r} (known: {', '.join(TARGETS)})") from None


class CompileRequest(msgspec.Struct, frozen=True):
    """One stage of one permutation: a source in the materials root plus its defines.

    ``source`` is relative to the materials root, '/'-separated (``'pbr/pbr.frag'``).
    ``defines`` are ``(name, value)`` pairs, injected as a preamble of ``#define``
    lines (see :mod:`pipeline.compilers.preamble`).  A generated stage
    (:mod:`pipeline.plan.generate`) carries its ``text``; ``source`` is then its
    name (``generated/<hash>.frag``) and includes resolve from the materials root.
    """

    source: str
    stage: str
    language: str = "glsl"
    entry: str = "main"
    defines: tuple[tuple[str, str], ...] = ()
    target: str = "vulkan1.2"
    optimize: bool = False
    relaxed: bool = False       # glslang's relaxed Vulkan rules
    auto_map: bool = False      # automatic binding and location mapping
    version: str | None = None  # '#version' of a source without one ('300 es', '450')
    text: str | None = None                # generated source text (``source`` then only names it)
    problems: tuple[Diagnostic, ...] = ()  # generation errors: the job fails with these, nothing compiles
    registers: tuple[tuple[str, int], ...] = DEFAULT_REGISTERS  # HLSL register class -> binding shift
    link: tuple[CompileRequest, ...] = ()  # the stages of its program whose interface this one must match
    plugins: tuple[tuple[str, str, str], ...] = ()  # (name, version, code) of the plug-ins the job went through
    backend: str | None = None  # a compile backend plug-in's spec: it compiles ``target`` (not a built-in one)
    msl_version: str = DEFAULT_MSL_VERSION  # metal: the MSL version SPIRV-Cross writes ('2.1', '3.0')
    argument_buffers: bool = False          # metal: resources in argument buffers (MSL 2.0 or later)

    def __post_init__(self) -> None:
        if self.version is not None:
            parse_version(self.version)
        if self.stage not in STAGES:
            raise RequestError(f"unknown stage {self.stage!r} (known: {', '.join(STAGES)})")
        if self.language not in LANGUAGES:
            raise RequestError(f"unknown language {self.language!r} (known: {', '.join(LANGUAGES)})")
        if self.backend is None:
            target_info(self.target)
        if not MSL_VERSION.match(self.msl_version):
            raise RequestError(f"bad MSL version {self.msl_version!r} (e.g. '2.1', '3.0')")
        unknown = sorted(set(dict(self.registers)) - set(REGISTER_CLASSES))
        if unknown:
            raise RequestError(f"unknown register class {unknown[0]!r} (known: {', '.join(REGISTER_CLASSES)})")


def binding_shifts(request: CompileRequest) -> dict[int, int]:
    """glslang resource type -> binding shift of a request on a SPIR-V target: the stage's
    :data:`BINDING_BASE` under ``auto_map``, plus for HLSL its register class's shift."""
    if request.backend is not None or not target_info(request.target).is_spirv:
        return {}
    base = BINDING_BASE[request.stage] if request.auto_map else 0
    shifts = {resource: base for resource in range(6)} if base else {}
    if request.language == "hlsl":
        for name, shift in request.registers:
            for resource in REGISTER_CLASSES[name]:
                shifts[resource] = base + shift
    return {resource: shift for resource, shift in sorted(shifts.items()) if shift}


def links_by_name(request: CompileRequest) -> bool:
    """True when the request's varyings are linked by name across its program (GLSL; HLSL links by semantic)."""
    return request.language == "glsl"


def links_program(request: CompileRequest) -> bool:
    """True when the request is finished as part of its program: on a SPIR-V target, under ``auto_map``,
    and HLSL always (its stages are numbered by register and semantic, never by explicit layouts)."""
    return (request.backend is None and (request.auto_map or request.language == "hlsl")
            and target_info(request.target).is_spirv)


@dataclass(frozen=True)
class CompileOutput:
    """The blob (SPIR-V, GLSL ES text for webgl2, MSL text for metal, WGSL text for webgpu; ``None`` when
    compilation failed) plus located
    diagnostics (errors and warnings)."""

    spirv: bytes | None
    diagnostics: tuple[Diagnostic, ...] = ()
    seconds: float = field(default=0.0, compare=False)  # wall time of this compile (the timing log)
    # (SPIRV-Cross revision, reflection document) of the blob, when a farm worker reflected it too
    reflection: tuple[str, dict] | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.spirv is not None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")
