"""Static types of rule expressions: feature domains, the types fact paths have (from the facts models),
and what each operator accepts, so that a mismatch known at load is a located error rather than a
failure at run time."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

import msgspec

from pipeline.facts import is_model


# ------------------------------------------------------------------ static types
class Domain(msgspec.Struct, frozen=True):
    """A feature as expressions see it: its kind and finite values."""

    name: str
    kind: str  # 'bool' | 'int' | 'enum' | 'set'
    values: tuple  # an open domain: just its default
    open: bool = False  # values computed from facts (any int; a set's define names), not listed


class SType(msgspec.Struct, frozen=True):
    """What is statically known about a sub-expression's value."""

    kind: str = "any"  # 'model' | 'dict' | 'seq' | 'scalar' | 'any'
    model: Any = None  # the fact model class ('model'), or the item annotation ('dict'/'seq')
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
    if is_model(annotation):
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


# ------------------------------------------------------------------ what operators accept
NUMBER, TEXT, LIST, MAPPING, GROUP, SET = "number", "string", "list", "mapping", "fact group", "set feature"
ORDERED = frozenset([NUMBER, TEXT, LIST])  # what '<' can order (each only against its own kind)
CONTAINERS = frozenset([LIST, MAPPING, TEXT, SET])  # what 'in' can look into


def _class_of(value: Any) -> str | None:
    if isinstance(value, (bool, int, float)):
        return NUMBER
    if isinstance(value, str):
        return TEXT
    return LIST if isinstance(value, tuple) else None


def classes(t: SType) -> frozenset[str] | None:
    """What a value of static type ``t`` can be at run time, ``None`` aside (bools count as numbers,
    as arithmetic and comparisons treat them); ``None`` when that is not known before run time."""
    if t.feature is not None and t.feature.kind in ("set", "bool", "int", "name"):
        return frozenset([{"set": SET, "name": TEXT}.get(t.feature.kind, NUMBER)])
    if t.kind in ("model", "dict", "seq"):
        return frozenset([{"model": GROUP, "dict": MAPPING, "seq": LIST}[t.kind]])
    if t.kind != "scalar":
        return None
    if t.values is not None:
        found = {_class_of(v) for v in t.values if v is not None}
        return None if None in found else frozenset(found)  # type: ignore[arg-type]
    if t.model in (bool, int, float):
        return frozenset([NUMBER])
    return frozenset([TEXT]) if t.model is str else None


PLURAL = {NUMBER: "numbers", TEXT: "strings", LIST: "lists", MAPPING: "mappings", GROUP: "fact groups",
          SET: "set features"}
NUMBER_TYPE = SType("scalar", float)  # what arithmetic gives


def _is(found: frozenset[str]) -> str:
    names = sorted(found)
    return ("a set feature (a set of define names)" if names == [SET]
            else " or ".join(("an " if n[0] in "aeiou" else "a ") + n for n in names))


def _q(text: str) -> str:
    """An operand's text quoted once (a string literal already is)."""
    return text if text[:1] in "'\"" else f"'{text}'"


def number_problem(t: SType, text: str, what: str) -> str | None:
    """Why ``what`` (arithmetic, unary minus) cannot take this operand, or None."""
    found = classes(t)
    if found and not found <= {NUMBER}:
        return f"{what} needs numbers; {_q(text)} is {_is(found)}"
    return None


def has_problem(t: SType, text: str) -> str | None:
    found = classes(t)
    if found and TEXT not in found:
        return f"has() takes a vertex attribute name, e.g. has('NORMAL'), not {_q(text)} ({_is(found)}; " \
               "a fact is present when it is not None)"
    return None


def compare_problem(op: str, left: SType, right: SType, ltext: str, rtext: str) -> str | None:
    """Why ``left <op> right`` can never run or never hold, from the static types; None when it may."""
    lc, rc = classes(left), classes(right)
    if op in ("in", "not in"):
        if not rc:
            return None
        if not rc & CONTAINERS:
            return f"'{op}' needs a list, a mapping, a set feature or a string on its right; {_q(rtext)} is {_is(rc)}"
        items = rc
        if rc == {LIST} and right.model is not None:
            items = classes(stype_of(right.model, "")) or frozenset()
        elif rc <= {TEXT, SET, MAPPING}:
            items = frozenset([TEXT])  # characters, define names, keys: strings
        if lc and items and not lc & items:
            held = " or ".join(sorted(PLURAL[c] for c in items))
            return f"{_q(rtext)} holds only {held} and {_q(ltext)} is {_is(lc)}: it is never in it"
        return None
    if not lc or not rc:
        return None
    if op in ("<", "<=", ">", ">="):
        for found, text in ((lc, ltext), (rc, rtext)):
            if not found & ORDERED:
                return f"'{op}' cannot order {_q(text)}: it is {_is(found)}"
        if not lc & rc:
            return f"'{op}' cannot compare {_q(ltext)} ({_is(lc)}) with {_q(rtext)} ({_is(rc)})"
        return None
    if op in ("==", "!="):
        lt, rt = ({TEXT if c == SET else c for c in found} for found in (lc, rc))
        if not lt & rt:
            never = "never" if op == "==" else "always"
            return f"{_q(ltext)} is {_is(lc)} and {_q(rtext)} is {_is(rc)}: '{op}' is {never} true"
    return None
