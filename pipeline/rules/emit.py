"""How a feature's value becomes ``#define`` lines: emit styles and define-name templates.

Per feature (``features.<NAME>`` of a rule set), with ``D`` its define name (``define:``,
default the feature's name):

| kind | ``emit: value`` (default) | ``emit: ifdef`` | ``emit: symbol`` |
|---|---|---|---|
| bool | ``D 0``/``D 1`` | ``D 1`` when true, nothing otherwise | (enums only) |
| int | ``D <value>`` | ``D <value>`` when not the default | (enums only) |
| enum | ``D_<V> i`` for every value, ``D <i>`` | ``D_<VALUE> 1`` when not the default | ``D_<V> i`` for every value, ``D D_<VALUE>`` |
| set | ``<name> 1`` per element (always) | the same | (enums only) |

A specialization feature gives ``D_SPEC_ID <constant_id>`` (plus the enum constants);
a dynamic one only the enum constants (``value`` and ``symbol`` styles).  A feature with
``when:`` emits nothing when the condition is false over the key's features.

A *set* feature is derived from a mapping or a list fact (``mesh.attributes``) and its
``define:`` is a template whose ``{field}`` placeholders name the parts of an element:
the mapping's key (named by ``as:``, default ``key``) and the fields of the element's
model (``{type}`` of an :class:`~pipeline.facts.Attribute`), or ``{value}`` for a
list of plain values.  ``HAS_{attribute}_{type}`` over ``mesh.attributes`` gives
``HAS_TEXCOORD_1_VEC2``, ``HAS__PRESSURE_SCALAR`` ...  Characters other than letters,
digits and ``_`` in a rendered name become ``_``.  The set's value in a key is its
define names, sorted and joined by ``+``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from pipeline.facts import Frozen, fact_fields, is_model
from pipeline.rules.expr_runtime import SEPARATOR
from pipeline.checked import suggest
from pipeline.rules.expr_types import Domain, SType

FeatureValue = bool | int | str

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFINE_TEXT = re.compile(r"^[A-Za-z0-9_]*$")
UNSAFE = re.compile(r"[^A-Za-z0-9_]")


class TemplateError(ValueError):
    """A define template that cannot be rendered: the message says why."""


def template_fields(template: str) -> tuple[str, ...]:
    """The placeholder names of a define template; raises :class:`TemplateError` when malformed."""
    names = []
    for match in PLACEHOLDER.finditer(template):
        if not FIELD.match(match.group(1)):
            raise TemplateError(f"'{{{match.group(1)}}}' is not a placeholder name")
        names.append(match.group(1))
    rest = PLACEHOLDER.sub("", template)
    if not DEFINE_TEXT.match(rest) or "{" in rest or "}" in rest:
        raise TemplateError(f"define template '{template}' may hold only letters, digits, '_' and {{field}}")
    if template[:1].isdigit():
        raise TemplateError(f"define template '{template}' starts with a digit")
    return tuple(names)


def format_value(value: FeatureValue) -> str:
    """Bools as 0/1, everything else as itself (the key text's form)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def define_name_ok(name: str) -> bool:
    return name.isidentifier() and name.isascii() and not name.startswith("__")


def define_problem(feature: Any) -> str | None:
    """What is wrong with a feature's ``define:`` (None: nothing)."""
    try:
        fields = template_fields(feature.define)
    except TemplateError as exc:
        return str(exc)
    if feature.type != "set" and (fields or not define_name_ok(feature.define)):
        return f"'{feature.define}' is not a valid #define name" + (
            " (placeholders are for set features)" if fields else "")
    if feature.type == "set" and not fields:
        return "a set feature's define template needs a {field} placeholder, else every element gives one define"
    return None


def set_derive_problems(name: str, feature: Any, expr: Any) -> list[tuple[bool, str]]:
    """(at the template?, message) for a set feature derived by ``expr``."""
    offered = element_fields(expr.stype, feature.key_name)
    if offered is None:
        if expr.stype.kind == "any":
            return []
        return [(False, f"set feature {name} is derived from a mapping or a list fact (e.g. mesh.attributes), "
                        f"not '{expr.text}'")]
    try:
        fields = template_fields(feature.define or "")
    except TemplateError:
        return []  # reported at the template
    return [(True, f"unknown placeholder '{{{f}}}' in the define template of {name}{suggest(f, offered)} "
                   f"(an element of '{expr.text}' offers: {', '.join(offered)})")
            for f in fields if f not in offered]


def element_fields(stype: SType, key_name: str) -> tuple[str, ...] | None:
    """The placeholders an element of a collection of this static type offers (None: unknown)."""
    if stype.kind not in ("dict", "seq"):
        return None
    item = stype.model
    fields = list(fact_fields(item)) if is_model(item) else ["value"]
    return tuple([key_name] + fields) if stype.kind == "dict" else tuple(fields)


def _parts(element: Any) -> dict[str, Any]:
    if isinstance(element, Frozen):
        return msgspec.structs.asdict(element)
    if isinstance(element, dict):
        return dict(element)
    return {"value": element}


def render_set(template: str, key_name: str, collection: Any) -> str:
    """A set feature's value: the sorted define names the template gives over ``collection``."""
    if collection is None:
        return ""
    if isinstance(collection, dict):
        elements = [{key_name: k, **_parts(v)} for k, v in collection.items()]
    elif isinstance(collection, (list, tuple, set, frozenset)):
        elements = [_parts(v) for v in collection]
    else:
        raise TemplateError(f"a set feature is derived from a mapping or a list, not {type(collection).__name__}")
    names = set()
    for parts in elements:
        def field(match: re.Match) -> str:
            if match.group(1) not in parts:
                raise TemplateError(f"no field '{match.group(1)}' in an element (fields: {', '.join(parts)})")
            return UNSAFE.sub("_", format_value(parts[match.group(1)]))
        names.add(PLACEHOLDER.sub(field, template))
    return SEPARATOR.join(sorted(names))


def set_names(value: str) -> list[str]:
    """The define names of a set feature's value."""
    return [n for n in value.split(SEPARATOR) if n]


def feature_defines(feature: Any, name: str, domain: Domain, mode: str, value: FeatureValue,
                    constant_id: int | None) -> list[tuple[str, str]]:
    """The ``(name, value)`` defines of one feature of a key (the table above)."""
    define = feature.define or name
    if domain.kind == "name":
        return []  # a reference a source generator reads, never a #define
    if domain.kind == "set":
        return [(n, "1") for n in set_names(str(value))]
    emit = feature.emit
    default = domain.values[0]
    changed = value != default or type(value) is not type(default)
    out = []
    if domain.kind == "enum" and emit != "ifdef":
        out = [(f"{define}_{v}", str(i)) for i, v in enumerate(domain.values)]
    if mode == "specialization":
        out.append((f"{define}_SPEC_ID", str(constant_id)))
    elif mode == "static":
        if emit == "symbol":
            out.append((define, f"{define}_{value}"))
        elif emit == "ifdef":
            if changed and domain.kind == "enum":
                out.append((f"{define}_{value}", "1"))
            elif changed:
                out.append((define, format_value(value)))
        else:
            out.append((define, str(domain.values.index(value)) if domain.kind == "enum" else format_value(value)))
    return out
