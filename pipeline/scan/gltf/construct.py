"""Building frozen fact models from values that are already validated, without validating again.

The facts builders (:mod:`pipeline.scan.gltf.materials`, :mod:`pipeline.scan.gltf.draws`) take
their inputs from the validated glTF models, so every value already has the type
the fact field declares.  :func:`construct` gives the object ``Model(**values)``
would give (same ``__dict__`` in field order, same fields set, equal, same dump and
signature) at a fraction of the cost; tests/e2e/test_scan_parallel.py checks it against
validation over the corpus.  Only for values built here: never for data read back
from a cache or given by a user.

:func:`canonical` is the canonical serialization (see :mod:`pipeline.digest`) of a fact
model, so that a :class:`~pipeline.facts.DrawFacts` signature can be assembled from the
bytes of its parts, each computed once.
"""

from __future__ import annotations

import functools

from typing import Any, TypeVar

from pydantic import BaseModel

from pipeline.digest import canonical_bytes
from pipeline.facts import ChunkFacts, DrawFacts, DrawInfo, MaterialFacts, MeshFacts, NodeFacts, SceneFacts

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__
_MISSING = object()
# class -> (field name -> default or _MISSING, in field order; fields with a default factory; field count)
_PLANS: dict[type, tuple[dict[str, Any], tuple[tuple[str, Any], ...], int]] = {}


def _plan(cls: type) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...], int]:
    template, factories = {}, []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            template[name] = _MISSING
            factories.append((name, info.default_factory))
        elif info.is_required():
            template[name] = _MISSING
        else:
            template[name] = info.default
    _PLANS[cls] = (template, tuple(factories), len(template))
    return _PLANS[cls]


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """``cls(**values)`` for values that already have the declared types (no validation)."""
    template, factories, count = _PLANS.get(cls) or _plan(cls)
    data = template.copy()
    data.update(values)  # existing keys keep their place: field order
    if len(data) != count:
        raise TypeError(f"{cls.__name__}: unknown fields {sorted(data.keys() - template.keys())}")
    for name, factory in factories:
        if data[name] is _MISSING:
            data[name] = factory()
    if len(values) < count and any(v is _MISSING for v in data.values()):
        raise TypeError(f"{cls.__name__}: required fields missing")
    return _model(cls, data, set(values))


def construct_every(cls: type[M], values: dict[str, Any]) -> M:
    """:func:`construct` for ``values`` that give every field of ``cls``, in field order (checked by tests,
    not here: the caller builds them so)."""
    return _model(cls, values, set(values))


def _model(cls: type[M], data: dict[str, Any], given: set[str]) -> M:
    """A model of ``cls`` holding ``data`` as its fields, ``given`` the ones set explicitly."""
    model = cls.__new__(cls)
    _set(model, "__dict__", data)
    _set(model, "__pydantic_fields_set__", given)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_DRAW_FIELDS_SET = frozenset(("mesh", "material", "node", "scene", "chunk", "draw"))


def draw_facts(mesh: MeshFacts, material: MaterialFacts, node: NodeFacts, scene: SceneFacts,
               chunk: ChunkFacts, info: DrawInfo) -> DrawFacts:
    """``construct(DrawFacts, {...})`` of these parts (no provided facts), without its generic checks."""
    facts = DrawFacts.__new__(DrawFacts)
    _set(facts, "__dict__", {"mesh": mesh, "material": material, "node": node, "scene": scene, "chunk": chunk,
                             "draw": info, "ext": {}})
    _set(facts, "__pydantic_fields_set__", set(_DRAW_FIELDS_SET))
    _set(facts, "__pydantic_extra__", None)
    _set(facts, "__pydantic_private__", None)
    return facts


@functools.cache
def _dropped(cls: type) -> tuple:
    """The fields of a model class its dump leaves out when a predicate says so (``exclude_if``)."""
    return tuple((name, info.exclude_if) for name, info in cls.model_fields.items()
                 if getattr(info, "exclude_if", None) is not None)


def _fields_of(value: Any) -> dict:
    if isinstance(value, BaseModel):
        fields, dropped = value.__dict__, _dropped(type(value))
        if dropped and any(test(fields[name]) for name, test in dropped):
            fields = {k: v for k, v in fields.items() if not any(k == n and t(v) for n, t in dropped)}
        return fields
    raise TypeError(f"cannot serialize {type(value).__name__}")


def canonical(model: BaseModel) -> bytes:
    """Canonical bytes of a fact model's JSON dump (what ``signature()`` hashes).

    Equal to ``canonical_bytes(model.model_dump(mode="json"))`` for fact models (plain
    JSON values, tuples and nested models), without building the dump first.
    """
    return canonical_bytes(_fields_of(model), default=_fields_of)
