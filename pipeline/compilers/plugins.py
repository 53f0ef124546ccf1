"""Plug-in points: a studio's own code at the seams of the job plan and the compile.

Three kinds, each a small typed interface (docs/plugins.md):

| kind | interface | what it does | found as |
|---|---|---|---|
| source transform | :class:`SourceTransform` | a stage's text -> text, before preprocessing and projection | ``permutation_pipeline.transforms`` |
| source generator | :class:`~pipeline.plan.generate.SourceGenerator` | a family ``kind``: a key -> per-stage text | ``permutation_pipeline.generators`` |
| compile backend | :class:`CompileBackend` | a compile target the tool does not ship | ``permutation_pipeline.backends`` |

A plug-in is named by a *reference* (an entry-point name, ``module:attribute`` or
``path/to/file.py:attribute``), resolved and loaded by :mod:`pipeline.plugin_loader`
(its names are importable from here too) into a :class:`PluginRef` whose
``(name, version, code)`` goes into the key of every job the plug-in touched, so
editing its code recompiles exactly those jobs.  The fourth kind, fact providers, runs
before any key exists (:mod:`pipeline.fact_providers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import msgspec

from pipeline.errors import Diagnostic

from pipeline.plugin_loader import (  # noqa: F401  (the loader, named here too)
    GROUPS,
    PluginError,
    PluginRef,
    _entry_point,
    code_of,
    entry_point_names,
    load,
    load_attribute,
    resolve,
    source_paths,
)


@runtime_checkable
class SourceTransform(Protocol):
    """A text step of an engine: one stage's source text in, the text the compiler sees out.

    ``defines`` are the key's whole preamble (before projection, so a count define the
    file does not name is there); ``key`` is the key's canonical text.  Must be a pure
    function of its arguments: its result is cached by them.
    """

    name: str
    version: str

    def transform(self, family: str, key: str, stage: str, text: str, defines: Mapping[str, str]) -> str: ...


class BackendJob(msgspec.Struct, frozen=True):
    """What a compile backend is given for one job."""

    source: str                          # the stage source's canonical path (diagnostics name it)
    text: str                            # the stage text (after the family's transforms)
    stage: str                           # vertex, fragment or compute
    entry: str
    language: str                        # glsl or hlsl
    target: str                          # the backend's target name (pipeline.toml [plugins.backends])
    defines: tuple[tuple[str, str], ...]  # projected, in preamble order
    options: Mapping[str, object] = msgspec.field(default_factory=dict)  # optimize, relaxed, auto_map, version
    includes: Mapping[str, str] = msgspec.field(default_factory=dict)   # library-relative path -> text of the closure


class BackendResult(msgspec.Struct, frozen=True):
    """A compile backend's answer: the blob (None when it failed) and located diagnostics."""

    blob: bytes | None
    diagnostics: tuple[Diagnostic, ...] = ()


@runtime_checkable
class CompileBackend(Protocol):
    """A compiler the tool does not ship (a studio's DXC, a console compiler)."""

    name: str
    version: str

    def compile(self, job: BackendJob) -> BackendResult: ...


class Plugins(msgspec.Struct, frozen=True):
    """A world's plug-ins: transforms for every family, generators by kind, backends by target."""

    transforms: tuple[PluginRef, ...] = ()
    generators: tuple[tuple[str, PluginRef], ...] = ()
    backends: tuple[tuple[str, PluginRef], ...] = ()
    family_transforms: tuple[tuple[str, tuple[PluginRef, ...]], ...] = ()  # the rule sets' own, by family

    def chain(self, family: str) -> tuple[PluginRef, ...]:
        """A family's transforms in declared order: pipeline.toml's, then its rule set's."""
        return self.transforms + dict(self.family_transforms).get(family, ())

    def generator(self, kind: str) -> PluginRef | None:
        return dict(self.generators).get(kind)

    def backend(self, target: str) -> PluginRef | None:
        return dict(self.backends).get(target)

    def refs(self) -> list[PluginRef]:
        """Every plug-in of the set."""
        return [*self.transforms, *(r for _, chain in self.family_transforms for r in chain),
                *(r for _, r in self.generators), *(r for _, r in self.backends)]


NO_PLUGINS = Plugins()
