"""Static types of rule expressions: feature domains, and the types fact paths have (from the facts models)."""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel


# ------------------------------------------------------------------ static types
@dataclass(frozen=True)
class Domain:
    """A feature as expressions see it: its kind and finite values."""

    name: str
    kind: str  # 'bool' | 'int' | 'enum' | 'set'
    values: tuple  # an open domain: just its default
    open: bool = False  # values computed from facts (any int; a set's define names), not listed


@dataclass(frozen=True)
class SType:
    """What is statically known about a sub-expression's value."""

    kind: str = "any"  # 'model' | 'dict' | 'seq' | 'scalar' | 'any'
    model: Any = None  # the pydantic class ('model'), or the item annotation ('dict'/'seq')
    values: frozenset | None = None  # every possible value, when known
    feature: Domain | None = None  # the value is this feature's value
    path: str | None = None  # the fact path, for messages


ANY = SType()


def unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without ``| None``, whether it had it)."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def stype_of(annotation: Any, path: str) -> SType:
    """The static type of a fact field from its annotation (Optional unwrapped)."""
    annotation, _ = unwrap_optional(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return SType("model", annotation, path=path)
    if origin is dict:
        return SType("dict", typing.get_args(annotation)[1], path=path)
    if origin in (tuple, list):
        args = typing.get_args(annotation)
        return SType("seq", args[0] if args else Any, path=path)
    if origin is Literal:
        return SType("scalar", values=frozenset(typing.get_args(annotation)) | {None}, path=path)
    if annotation is Any:
        return SType("any", path=path)
    return SType("scalar", annotation, path=path)


def suggest(word: str, candidates: typing.Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` or an empty string."""
    match = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


