"""Hand-written settings (parsed TOML or YAML) -> frozen msgspec structs, every problem located.

msgspec checks each value against its declared type, with the bounds, lengths and patterns
of ``msgspec.Meta``.  :func:`convert` walks a struct's fields itself so that a file with
three mistakes gets three problems, each with its path (msgspec stops at the first and
names a mapping's entries ``[...]``), and adds what a settings file needs around the types:

- a struct's :meth:`Checked.shape` rewrites a shorthand form before its fields are read
  (a bare file name where a ``{file: ...}`` mapping goes);
- :class:`Before` in a type's ``Annotated`` metadata rewrites a raw value before it is
  checked (a ``true`` written where an expression goes becomes the text ``True``);
- a struct's ``__post_init__`` checks its fields together; its ``ValueError`` is a problem
  at the struct's path.

A ``Path`` is written as a string.  Fields whose names start with ``_`` are the program's, never read from the data.  The
structs are plain msgspec structs otherwise: built directly (``CompileTarget(target=...)``,
no conversion of its arguments), compared and hashed by value, changed with
:func:`msgspec.structs.replace`.
"""

from __future__ import annotations

import difflib
import functools
import re
import types
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Union, get_args, get_origin, get_type_hints

import msgspec


class Checked(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A settings struct: immutable, unknown keys refused."""

    @classmethod
    def shape(cls, data: Any) -> Any:
        """The mapping form of a shorthand (``data`` unchanged when it is not one)."""
        return data


def doc(description: str) -> msgspec.Meta:
    """``Annotated`` metadata: what a field means (:func:`field_docs` reads it)."""
    return msgspec.Meta(description=description)


class Before:
    """``Annotated`` metadata: ``fn`` rewrites the raw value before it is checked."""

    __slots__ = ("fn",)

    def __init__(self, fn) -> None:
        self.fn = fn


class Problem(NamedTuple):
    """One thing wrong: where (keys and indexes from the root), which kind, and what."""

    path: tuple[str | int, ...]
    kind: Literal["unknown", "missing", "invalid"]
    message: str
    hint: str = ""  # an unknown key's close name among its table's keys, if any (the message says it too)


def close_name(word: str, candidates) -> str:
    """The candidate closest to ``word`` (difflib, at least 0.6 alike), or "" when none is."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else ""


def did_you_mean(name: str) -> str:
    """`` (did you mean 'x'?)`` for a close name, nothing for ""."""
    return f" (did you mean '{name}'?)" if name else ""


def suggest(word: str, candidates) -> str:
    """`` (did you mean 'x'?)`` with the candidate closest to ``word``, or an empty string."""
    return did_you_mean(close_name(word, candidates))


class Invalid(ValueError):
    """The problems of a conversion, in the order of the data's fields and entries."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{'.'.join(map(str, p.path)) or '(root)'}: {p.message}" for p in problems))
        self.problems = problems


def convert(data: Any, hint: Any) -> Any:
    """``data`` as ``hint`` (a struct, or any type msgspec converts); raises :class:`Invalid`."""
    problems: list[Problem] = []
    value = _convert(data, hint, (), problems)
    if problems:
        raise Invalid(problems)
    return value


def field_docs(cls: type) -> dict[str, str]:
    """A struct's input fields, as written in the data -> their descriptions ("" when a field has none)."""
    return {key: next((m.description for m in get_args(hint)[1:] if isinstance(m, msgspec.Meta) and m.description),
                      "") if get_origin(hint) is Annotated else ""
            for key, (_, hint, _) in _fields(cls).items()}


_BAD = object()


class _Plan(NamedTuple):
    before: tuple  # Before functions, outermost first
    core: Any  # the type without Before metadata (msgspec.Meta kept)
    kind: str  # struct, optional, mapping, sequence, leaf
    args: tuple
    metas: tuple  # msgspec.Meta of a mapping or sequence (lengths)


@functools.cache
def _plan(hint: Any) -> _Plan:
    before: list = []
    metas: tuple = ()
    core = hint
    while get_origin(core) is Annotated:
        inner, *extra = get_args(core)
        before += [m.fn for m in extra if isinstance(m, Before)]
        metas += tuple(m for m in extra if isinstance(m, msgspec.Meta))
        core = inner
    kept = Annotated[(core, *metas)] if metas else core
    origin = get_origin(core)
    if isinstance(core, type) and issubclass(core, msgspec.Struct):
        return _Plan(tuple(before), kept, "struct", (core,), metas)
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(core) if a is not type(None)]
        inner = _plan(members[0]) if len(members) == 1 else None
        if inner is not None and len(get_args(core)) == 2 and (inner.kind != "leaf" or inner.before):
            return _Plan(tuple(before), kept, "optional", (members[0],), metas)
    if origin is dict:
        return _Plan(tuple(before), kept, "mapping", get_args(core), metas)
    if origin in (list, tuple) and (origin is list or get_args(core)[1:] == (Ellipsis,)):
        return _Plan(tuple(before), kept, "sequence", (get_args(core)[0], origin), metas)
    return _Plan(tuple(before), kept, "leaf", (), metas)


def _convert(data: Any, hint: Any, path: tuple, out: list[Problem]) -> Any:
    plan = _plan(hint)
    for fn in plan.before:
        try:
            data = fn(data)
        except ValueError as exc:
            out.append(Problem(path, "invalid", str(exc)))
            return _BAD
    if plan.kind == "struct":
        return _struct(data, plan.args[0], path, out)
    if plan.kind == "optional":
        return None if data is None else _convert(data, plan.args[0], path, out)
    if plan.kind == "mapping" and isinstance(data, dict):
        before = len(out)
        key_type, value_type = plan.args
        entries = {_convert(k, key_type, path + (k,), out): _convert(v, value_type, path + (k,), out)
                   for k, v in data.items()}
        return entries if len(out) == before and _length(entries, plan.metas, path, out) else _BAD
    if plan.kind == "sequence" and isinstance(data, list | tuple):
        before = len(out)
        item_type, container = plan.args
        items = [_convert(v, item_type, path + (i,), out) for i, v in enumerate(data)]
        items = tuple(items) if container is tuple else items
        return items if len(out) == before and _length(items, plan.metas, path, out) else _BAD
    try:
        return msgspec.convert(data, plan.core, dec_hook=_path)
    except msgspec.ValidationError as exc:
        out.append(_leaf_problem(str(exc), plan.core, data, path))
        return _BAD


def _path(kind: type, value: Any) -> Any:
    """A file path is written as a string."""
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise TypeError("expected a path (a string)")


def _struct(data: Any, cls: type, path: tuple, out: list[Problem]) -> Any:
    data = cls.shape(data) if issubclass(cls, Checked) else data
    if not isinstance(data, dict):
        out.append(Problem(path, "invalid", f"expected a mapping, got {_kind(data)}"))
        return _BAD
    before = len(out)
    fields = _fields(cls)
    for key in data:
        if key not in fields:
            close = close_name(str(key), fields)
            out.append(Problem(path + (key,), "unknown", "unknown key" + did_you_mean(close), close))
    values = {}
    for key, (name, hint, required) in fields.items():
        if key in data:
            values[name] = _convert(data[key], hint, path + (key,), out)
        elif required:
            out.append(Problem(path + (key,), "missing", "required key missing"))
    if len(out) != before:
        return _BAD
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        out.append(Problem(path, "invalid", str(exc)))
        return _BAD


@functools.cache
def _fields(cls: type) -> dict[str, tuple[str, Any, bool]]:
    """encode name -> (attribute, type, required) of a struct's input fields."""
    hints = get_type_hints(cls, include_extras=True)
    return {f.encode_name: (f.name, hints[f.name], f.required)
            for f in msgspec.structs.fields(cls) if not f.name.startswith("_")}


def _length(value: Any, metas: tuple, path: tuple, out: list[Problem]) -> bool:
    for meta in metas:
        if meta.min_length is not None and len(value) < meta.min_length:
            out.append(Problem(path, "invalid", f"needs at least {meta.min_length} "
                                                f"entr{'y' if meta.min_length == 1 else 'ies'}"))
            return False
        if meta.max_length is not None and len(value) > meta.max_length:
            out.append(Problem(path, "invalid", f"takes at most {meta.max_length} entries, not {len(value)}"))
            return False
    return True


_AT = re.compile(r" - at `\$(.*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_GOT = re.compile(r", got `[^`]*`$")


def _leaf_problem(message: str, hint: Any, data: Any, path: tuple) -> Problem:
    """msgspec's message, with the part of its path inside the value added to ``path``."""
    found = _AT.search(message)
    if found:
        message = message[:found.start()]
        path = path + tuple(key if key else int(index) for key, index in _STEP.findall(found.group(1)))
    else:
        message = _GOT.sub("", message)  # the value itself is named below
    allowed = _literals(hint)
    if allowed is not None and not found:
        names = [repr(a) for a in allowed]
        message = f"expected {' or '.join(names) if len(names) < 3 else ', '.join(names[:-1]) + ' or ' + names[-1]}"
    else:
        message = message[:1].lower() + message[1:].replace("`", "")
    if "got" in message or message.startswith("invalid enum value"):
        return Problem(path, "invalid", message)
    return Problem(path, "invalid", f"{message}, got {_kind(data)}")


def _literals(hint: Any) -> tuple | None:
    while get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    return get_args(hint) if get_origin(hint) is Literal else None


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value).lower() if value is not None else "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
    return {dict: "a mapping", list: "a list", tuple: "a list"}.get(type(value), type(value).__name__)
