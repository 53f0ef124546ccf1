"""Every fact path a rule can read, with its type and meaning, generated from the fact models.

:func:`fact_paths` walks :class:`~pipeline.facts.DrawFacts` (the same models rule
expressions are checked against) and gives one row per path: ``material.clearcoat``,
``material.clearcoat.clearcoatFactor``, ``mesh.attributes[name]`` (a mapping: its
values' fields follow as ``mesh.attributes[name].type``) ...  :func:`reference_markdown`
renders them as the table of docs/own-ubershader.md (``pipeline rules facts`` prints it).
"""

from __future__ import annotations

import typing
from typing import Any, Literal

import msgspec

from pipeline.facts import DrawFacts, FactField, fact_fields, is_model
from pipeline.rules.expr_types import unwrap_optional


class FactPath(msgspec.Struct, frozen=True):
    path: str
    type: str
    description: str


def type_name(annotation: Any) -> str:
    """A fact type as the reference shows it: ``int``, ``str | None``, ``list[str]``, ``'A' | 'B'`` ..."""
    inner, optional = unwrap_optional(annotation)
    origin = typing.get_origin(inner)
    if origin is Literal:
        text = " | ".join(repr(v) for v in typing.get_args(inner))
    elif origin in (tuple, list):
        args = [a for a in typing.get_args(inner) if a is not Ellipsis]
        text = f"list[{type_name(args[0]) if args else 'any'}]"
    elif origin is dict:
        key, value = typing.get_args(inner)
        text = f"mapping[{type_name(key)}, {type_name(value)}]"
    elif is_model(inner):
        text = inner.__name__
    elif inner is Any:
        text = "any"
    else:
        text = getattr(inner, "__name__", str(inner))
    return f"{text} | None" if optional else text


ROOTS = {
    "mesh": "the drawn mesh primitive: its vertex attributes, topology and morph targets",
    "material": "the draw's material (the glTF default material when the primitive has none); "
                "an extension block is None when the extension is absent",
    "node": "the node instancing the mesh",
    "scene": "the scene the draw comes from: identity, lights, aggregates over its draws",
    "chunk": "the chunk (output unit) the draw belongs to",
    "draw": "the draw itself (which KHR_materials_variants mapping it is)",
    "ext": "facts of fact provider plug-ins (docs/plugins.md)",
}


def _meaning(path: str, name: str, info: FactField, inner: Any) -> str:
    text = " ".join(info.description.split())
    if text:
        return text
    if path in ROOTS:
        return ROOTS[path]
    if is_model(inner) and inner.__doc__:
        return inner.__doc__.strip().splitlines()[0]
    return f"glTF `{name}` as authored (its default when absent)"


def fact_paths(model: type = DrawFacts, prefix: str = "") -> list[FactPath]:
    """Every readable path under ``model``, depth first in field order."""
    out = []
    for name, info in fact_fields(model).items():
        path = f"{prefix}{name}"
        inner, _ = unwrap_optional(info.annotation)
        out.append(FactPath(path, type_name(info.annotation), _meaning(path, name, info, inner)))
        origin = typing.get_origin(inner)
        if is_model(inner):
            out += fact_paths(inner, path + ".")
        elif origin is dict:
            value, _ = unwrap_optional(typing.get_args(inner)[1])
            if is_model(value):
                out += fact_paths(value, f"{path}[name].")
    return out


def reference_markdown() -> str:
    """The fact reference table (markdown)."""
    lines = ["| fact path | type | meaning |", "|---|---|---|"]
    for fact in fact_paths():
        description = fact.description.replace("|", "\\|")
        lines.append(f"| `{fact.path}` | `{fact.type.replace('|', chr(92) + '|')}` | {description} |")
    return "\n".join(lines) + "\n"
