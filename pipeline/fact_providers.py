"""Fact providers: extra facts per draw from files beside the glTF, declared and typed like the built-in ones.

A fact provider is a plug-in (:mod:`pipeline.plugin_loader`, kind ``facts``, entry-point
group ``permutation_pipeline.facts``) that a rule set names in ``fact_providers:``.  It
declares its ``name`` (the namespace its facts live in: ``ext.<name>.<fact>``), its
``facts`` with their types, and the ``sidecar`` file it reads, a pattern relative to
the glTF file (``{stem}.material.json``).  Per glTF file the scan's draws come from, it
is given the sidecar's bytes (``read``), then each draw (``provide``), and answers the
draw's values (docs/plugins.md).

This module is the part a rule set needs before any content: the interface, the
declaration checked into a :class:`ProviderSpec` (:func:`provider_spec`, a
:class:`~pipeline.plugin_loader.PluginError` saying what is wrong), and the model the
rule expressions are checked against (:func:`provided_model`).  Running providers over
scanned draws is :mod:`pipeline.scan.provided`.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Optional, Protocol, runtime_checkable

import msgspec

from pipeline.facts import DrawFacts, FactValue, Frozen, ProvidedFacts
from pipeline.plugin_loader import PluginError, PluginRef, load

SCALARS: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str}
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
FACT_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
VALUE_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
PATTERN_FIELDS = ("stem", "name")


class FactDraw(msgspec.Struct, frozen=True):
    """One draw as a fact provider sees it: where it comes from and its built-in facts."""

    file: str                 # the glTF file, relative to the world root, '/'-separated
    node: int
    mesh: int
    primitive: int
    material: int | None      # material index, None for the glTF default material
    variant: str | None       # KHR_materials_variants variant name, None for the base mapping
    facts: DrawFacts          # the built-in facts (material.doubleSided, mesh.attributes ...)


@runtime_checkable
class FactProvider(Protocol):
    """Extra facts per draw.  ``facts`` maps each fact name to ``"bool"``, ``"int"``, ``"float"``,
    ``"str"`` or a list of strings (an enum: its values); ``sidecar`` is a pattern relative to the glTF
    file's folder, ``{stem}`` the glTF file's name without its extension, ``{name}`` with it.

    ``read(gltf, sidecar)`` is called once per glTF file (``sidecar`` its bytes, None when absent) and
    may be left out (the bytes are passed on as they are); ``provide(data, draw)`` once per draw, with
    what ``read`` returned, answers a mapping of declared fact names to values (a name left out, or
    None, is unknown).  Both must be pure functions of their arguments."""

    name: str
    version: str
    facts: Mapping[str, Any]
    sidecar: str

    def provide(self, data: Any, draw: FactDraw) -> Mapping[str, FactValue]: ...


class ProviderSpec(msgspec.Struct, frozen=True):
    """A provider resolved and its declaration checked: what rules, scans and keys use of it."""

    ref: PluginRef
    name: str                                   # the namespace: ext.<name>
    facts: tuple[tuple[str, str | tuple[str, ...]], ...]  # fact -> scalar type name or enum values
    sidecar: str

    @property
    def identity(self) -> tuple[str, str, str]:
        return self.ref.identity

    def sidecar_of(self, file: str) -> str:
        """The world-relative path of the sidecar of the glTF file ``file`` (world-relative)."""
        folder, base = posixpath.split(file)
        stem = base.rsplit(".", 1)[0] if "." in base else base
        return posixpath.normpath(posixpath.join(folder, self.sidecar.format(stem=stem, name=base)))

    def plugin(self) -> FactProvider:
        return load(self.ref.spec, self.ref.code)


def provider_spec(ref: PluginRef) -> ProviderSpec:
    """Check a resolved provider's declaration; raises :class:`PluginError` saying what is wrong."""
    provider = load(ref.spec, ref.code)
    where = f"fact provider '{ref.name}'"
    name = getattr(provider, "name", None)
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise PluginError(f"{where}: its name must be a lower-case identifier (its facts are ext.<name>.<fact>), "
                          f"not {name!r}")
    if not callable(getattr(provider, "provide", None)):
        raise PluginError(f"{where} has no provide(data, draw) method")
    declared = getattr(provider, "facts", None)
    if not isinstance(declared, Mapping) or not declared:
        raise PluginError(f"{where}: 'facts' must map each fact name to its type, not {declared!r}")
    facts = tuple((fact, _fact_type(where, fact, kind)) for fact, kind in sorted(declared.items(), key=str))
    sidecar = getattr(provider, "sidecar", None)
    if not isinstance(sidecar, str) or not sidecar.strip():
        raise PluginError(f"{where}: 'sidecar' must be a file pattern relative to the glTF, e.g. "
                          f"'{{stem}}.material.json', not {sidecar!r}")
    try:
        formatted = sidecar.format(**{field: "x" for field in PATTERN_FIELDS})
    except (KeyError, IndexError, ValueError) as exc:
        raise PluginError(f"{where}: sidecar pattern {sidecar!r} may use only {{stem}} and {{name}} ({exc})") from None
    if Path(formatted).is_absolute() or ".." in Path(formatted).parts or "\\" in formatted:
        raise PluginError(f"{where}: sidecar pattern {sidecar!r} must stay in the glTF file's folder tree")
    return ProviderSpec(ref, name, facts, sidecar)


def _fact_type(where: str, fact: Any, kind: Any) -> str | tuple[str, ...]:
    if not isinstance(fact, str) or not FACT_RE.match(fact):
        raise PluginError(f"{where}: fact name {fact!r} must be an identifier")
    if isinstance(kind, str) and kind in SCALARS:
        return kind
    if isinstance(kind, (list, tuple)) and kind and all(isinstance(v, str) and VALUE_RE.match(v) for v in kind) \
            and len(set(kind)) == len(kind):
        return tuple(kind)
    raise PluginError(f"{where}: fact '{fact}' has type {kind!r}; give bool, int, float, str or a list of "
                      f"distinct enum values")


def python_type(kind: str | tuple[str, ...]) -> Any:
    """The annotation of a declared fact type (an enum is a ``Literal`` of its values)."""
    return Literal[kind] if isinstance(kind, tuple) else SCALARS[kind]


def type_text(kind: str | tuple[str, ...]) -> str:
    return " | ".join(repr(v) for v in kind) if isinstance(kind, tuple) else kind


def check_value(kind: str | tuple[str, ...], value: Any) -> FactValue:
    """``value`` as a fact of type ``kind`` (an int is a float too); raises ValueError when it is not one."""
    if value is None:
        return None
    if isinstance(kind, tuple):
        if isinstance(value, str) and value in kind:
            return value
    elif kind == "bool":
        if isinstance(value, bool):
            return value
    elif kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
                and abs(value) != float("inf"):
            return float(value)
    elif isinstance(value, str):
        return value
    raise ValueError(f"{value!r} ({type(value).__name__}), not of type {type_text(kind)}")


@functools.cache
def provided_model(specs: tuple[ProviderSpec, ...]) -> type[Frozen]:
    """The model ``ext`` is checked against in a rule set naming ``specs``: one optional group per
    provider, one optional field per declared fact."""
    if not specs:
        return ProvidedFacts
    groups = []
    for spec in specs:
        fields = [(fact, Optional[python_type(kind)], None) for fact, kind in spec.facts]
        doc = f"facts of the fact provider '{spec.name}' ({spec.ref.name} {spec.ref.version})"
        model = msgspec.defstruct(f"ext_{spec.name}", fields, bases=(Frozen,), kw_only=True,
                                  namespace={"__doc__": doc})
        groups.append((spec.name, Optional[model], None))
    return msgspec.defstruct("ProvidedFacts", groups, bases=(ProvidedFacts,), kw_only=True)
