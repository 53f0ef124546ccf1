"""A parsed JSON value walked against the glTF structs: every place it breaks them.

:func:`problems` follows the declarations of :mod:`pipeline.scan.gltf.structs` (struct
fields through :func:`msgspec.structs.fields`, TypedDict keys, ``Annotated`` bounds
through ``msgspec.Meta``) over a value parsed from JSON and lists each value the
structs reject, as (path, message), in the order of the declarations: fields and keys
as declared, array items and object entries as written.  The messages say what was
expected (``input should be a valid integer``, ``input should be 'OPAQUE', 'MASK' or
'BLEND'``, ``required property is missing`` ...).

Each declared type is turned once into a check (a closure); walking a document runs them.
The rules are the structs' own: an integer is a JSON integer (not ``1.0``, not
``true``), a number is finite, a fixed-size array has exactly its length, unknown
properties are ignored.  The ``extensions`` of the classes in
:data:`~pipeline.scan.gltf.structs.RAW_EXTENSIONS` are checked as their extension
struct, names it does not declare left alone, as :mod:`pipeline.scan.gltf.decode` reads them.
"""

from __future__ import annotations

import functools
import operator
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

import msgspec
import msgspec.inspect
from typing_extensions import NotRequired as NotRequiredExt, is_typeddict

from pipeline.scan.gltf import structs as S

Path = tuple[str | int, ...]
Problem = tuple[Path, str]
# A place while walking: (parent place, key), () for the root; a Path only for a problem.
Place = tuple
Check = Callable[[Any, Place, list], None]
_NOT_REQUIRED = (NotRequired, NotRequiredExt)


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """(JSON name, type, required) of a struct's fields or a TypedDict's keys, in declaration order."""
    raw = S.RAW_EXTENSIONS.get(cls)
    if is_typeddict(cls):
        required = {f.name: f.required for f in msgspec.inspect.type_info(cls).fields}  # as msgspec reads it
        hints = get_type_hints(cls, include_extras=True)
        fields = [(name, _strip(hint), required[name]) for name, hint in hints.items()]
    else:
        fields = [(f.encode_name, f.type, f.required) for f in msgspec.structs.fields(cls)]
        if cls in S.RAW_EXTENSIONS.values():
            fields = [f for f in fields if f[0] != "others"]  # a name of the JSON object, not a field
    if raw is not None:
        fields = [(name, _as(raw, hint) if name == "extensions" else hint, required)
                  for name, hint, required in fields]
    return tuple(fields)


def _as(raw: type, hint: Any) -> Any:
    """``raw`` in place of the plain dict of ``hint``, optional when ``hint`` is."""
    return raw | None if type(None) in get_args(hint) else raw


def _strip(hint: Any) -> Any:
    return get_args(hint)[0] if get_origin(hint) in _NOT_REQUIRED else hint


def problems(value: Any, hint: Any) -> list[Problem]:
    """Every value of ``value`` (parsed JSON) that ``hint`` (a type of the structs) rejects."""
    found: list = []
    _check(hint)(value, (), found)
    return [(_path(place), message) for place, message in found]


def _path(place: Place) -> Path:
    keys = []
    while place:
        place, key = place
        keys.append(key)
    return tuple(reversed(keys))


def _nothing(value: Any, place: Place, out: list) -> None:
    return None


@functools.cache
def _check(hint: Any) -> Check:
    """The check of one declared type."""
    metas: tuple = ()
    if get_origin(hint) is Annotated:
        hint, *rest = get_args(hint)
        metas = tuple(m for m in rest if isinstance(m, msgspec.Meta))
    if hint is Any:
        return _nothing
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        args = get_args(hint)
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1 or len(args) != 2:
            raise TypeError(f"structs type {hint!r} is not walked")  # only ``X | None`` is declared
        check = _check(inner[0])
        return lambda value, place, out: None if value is None else check(value, place, out)
    expected = _expected(hint, origin)
    parts = _parts(hint, origin)
    longest = next((m.max_length for m in metas if m.max_length is not None), None)
    bounds = [_bound(meta) for meta in metas]

    def check(value: Any, place: Place, out: list) -> None:
        message = expected(value)
        if message is not None:
            out.append((place, message))
            return
        if longest is not None and len(value) > longest:  # its items are not looked at
            kind = "list" if isinstance(value, list) else "dictionary"
            out.append((place, f"{kind} should have at most {_items(longest)} after validation, not {len(value)}"))
            return
        if parts is not None:
            before = len(out)
            parts(value, place, out)
            if len(out) != before:  # bounds are checked on a value whose parts are valid
                return
        for bound in bounds:
            message = bound(value)
            if message is not None:
                out.append((place, message))
                return

    return check


_SCALARS = (str, int, float, bool)


def _is_object(hint: Any) -> bool:
    return isinstance(hint, type) and (is_typeddict(hint) or issubclass(hint, msgspec.Struct))


def _expected(hint: Any, origin: Any) -> Callable[[Any], str | None]:
    """What a value should have been, or None when it has the right JSON type (and value, for a Literal)."""
    if origin is Literal:
        allowed = get_args(hint)
        names = [repr(a) if isinstance(a, str) else str(a) for a in allowed]
        message = "input should be " + (f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0])
        typed = {(type(a), a) for a in allowed}
        return lambda value: None if type(value) in _SCALARS and (type(value), value) in typed else message
    if origin in (list, tuple):
        return lambda value: None if type(value) is list else "input should be a valid array"
    if origin is dict or _is_object(hint):
        return lambda value: None if type(value) is dict else "input should be an object"
    if hint is bool:
        return lambda value: None if type(value) is bool else "input should be a valid boolean"
    if hint is int:
        return lambda value: None if type(value) is int else "input should be a valid integer"
    if hint is str:
        return lambda value: None if type(value) is str else "input should be a valid string"
    if hint is float:
        return _number
    raise TypeError(f"structs type {hint!r} is not walked")  # a declaration this module does not know


def _number(value: Any) -> str | None:
    if type(value) is not float and type(value) is not int:
        return "input should be a valid number"
    return None if abs(value) <= S.FLOAT_MAX else "input should be a finite number"  # also NaN


def _parts(hint: Any, origin: Any) -> Check | None:
    """The check of a container's items or an object's fields, None for a scalar."""
    args = get_args(hint)
    if origin is dict:
        return _entries(_check(args[1]))
    if origin is list or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return _items_of(_check(args[0]))
    if origin is tuple:
        return _fixed(tuple(_check(a) for a in args))
    if _is_object(hint):
        return _object(tuple((name, _check(field), required) for name, field, required in _fields(hint)))
    return None


def _entries(item: Check) -> Check:
    def check(value: dict, place: Place, out: list) -> None:
        for key, entry in value.items():
            item(entry, (place, key), out)
    return check


def _items_of(item: Check) -> Check:
    def check(value: list, place: Place, out: list) -> None:
        for i, entry in enumerate(value):
            item(entry, (place, i), out)
    return check


def _fixed(items: tuple[Check, ...]) -> Check:
    """A fixed-size array: each item its own type."""
    def check(value: list, place: Place, out: list) -> None:
        if len(value) > len(items):  # its items are not looked at
            out.append((place, f"tuple should have at most {_items(len(items))} after validation, not {len(value)}"))
            return
        for i, item in enumerate(items):
            if i < len(value):
                item(value[i], (place, i), out)
            else:
                out.append(((place, i), "required property is missing"))
    return check


def _object(fields: tuple[tuple[str, Check, bool], ...]) -> Check:
    def check(value: dict, place: Place, out: list) -> None:
        for name, field, required in fields:
            if name in value:
                field(value[name], (place, name), out)
            elif required:
                out.append(((place, name), "required property is missing"))
    return check


_BOUNDS = (("gt", "greater than", operator.le), ("ge", "greater than or equal to", operator.lt),
           ("lt", "less than", operator.ge), ("le", "less than or equal to", operator.gt))


def _bound(meta: msgspec.Meta) -> Callable[[Any], str | None]:
    """The first bound of ``meta`` that a value (of the right type) breaks."""
    limits = [(getattr(meta, name), words, breaks) for name, words, breaks in _BOUNDS
              if getattr(meta, name) is not None]

    def bound(value: Any) -> str | None:
        if isinstance(value, (list, dict)):
            if meta.min_length is not None and len(value) < meta.min_length:
                kind = "list" if isinstance(value, list) else "dictionary"
                return f"{kind} should have at least {_items(meta.min_length)} after validation, not {len(value)}"
            return None
        for limit, words, breaks in limits:
            if breaks(value, limit):
                return f"input should be {words} {limit}"
        return None
    return bound


def _items(count: int) -> str:
    return f"{count} item" + ("" if count == 1 else "s")
