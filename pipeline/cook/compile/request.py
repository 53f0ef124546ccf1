"""What a compile is asked to do and what it gives back.

Targets: ``target`` names a Vulkan environment; the SPIR-V version follows
Vulkan's own pairing.  The default, ``vulkan1.2``, produces SPIR-V 1.5 (the
newest version every Vulkan 1.2 driver must accept) and is validated under
Vulkan 1.2 rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.errors import Diagnostic

STAGES = ("vertex", "fragment", "compute")
LANGUAGES = ("glsl", "hlsl")


@dataclass(frozen=True)
class Target:
    """A compile target: Vulkan version, the SPIR-V version it implies, and glslang's codes."""

    name: str            # 'vulkan1.2': --target-env of glslangValidator and spirv-val
    spirv: tuple[int, int]
    client_version: int  # glslang_target_client_version_t
    spirv_version: int   # glslang_target_language_version_t


def _target(name: str, vulkan_minor: int, spirv_minor: int) -> Target:
    return Target(name, (1, spirv_minor), (1 << 22) | (vulkan_minor << 12), (1 << 16) | (spirv_minor << 8))


TARGETS = {
    "vulkan1.0": _target("vulkan1.0", 0, 0),
    "vulkan1.1": _target("vulkan1.1", 1, 3),
    "vulkan1.2": _target("vulkan1.2", 2, 5),
    "vulkan1.3": _target("vulkan1.3", 3, 6),
}


class RequestError(ValueError):
    """A compile request names an unknown stage, language or target (a bug in the caller)."""


def target_info(name: str) -> Target:
    """The :class:`Target` for a name such as ``'vulkan1.2'``."""
    try:
        return TARGETS[name]
    except KeyError:
        raise RequestError(f"unknown target {name!r} (known: {', '.join(TARGETS)})") from None


@dataclass(frozen=True)
class CompileRequest:
    """One stage of one permutation: a source in the materials root plus its defines.

    ``source`` is relative to the materials root, '/'-separated (``'pbr/pbr.frag'``).
    ``defines`` are ``(name, value)`` pairs, injected as a preamble of ``#define``
    lines (see :mod:`pipeline.cook.compile.preamble`).
    """

    source: str
    stage: str
    language: str = "glsl"
    entry: str = "main"
    defines: tuple[tuple[str, str], ...] = ()
    target: str = "vulkan1.2"
    optimize: bool = False

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise RequestError(f"unknown stage {self.stage!r} (known: {', '.join(STAGES)})")
        if self.language not in LANGUAGES:
            raise RequestError(f"unknown language {self.language!r} (known: {', '.join(LANGUAGES)})")
        target_info(self.target)


@dataclass(frozen=True)
class CompileOutput:
    """SPIR-V (``None`` when compilation failed) plus located diagnostics (errors and warnings)."""

    spirv: bytes | None
    diagnostics: tuple[Diagnostic, ...] = ()
    seconds: float = field(default=0.0, compare=False)  # wall time of this compile (the timing log)

    @property
    def ok(self) -> bool:
        return self.spirv is not None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")
