"""Run-time helpers of rule expressions: attribute and item access, comparisons and arithmetic that
treat absent data (``None``) as data, and the named helpers (``has``, ``count``, ``min``, ``max``, ``bucket``)."""

from __future__ import annotations

import ast
import math
import operator
import re
from typing import Any, Callable

from pipeline.facts import Frozen, fact_fields

SEPARATOR = "+"  # between the define names of a set feature's value (rules/emit.py)


class EvalError(Exception):
    """An expression failed at run time (e.g. comparing a string with a number)."""


Env = tuple  # (facts: DrawFacts | None, features: Mapping[str, Any] | None)
Fn = Callable[[Env], Any]


def get_attr(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Frozen):
        return getattr(obj, name) if name in fact_fields(type(obj)) else None  # a cached dict: O(1)
    if isinstance(obj, dict):
        return obj.get(name)
    return None


FACT_PATH_STEP = re.compile(r"\.?([A-Za-z_]\w*)|\[(?:'([^']*)'|\"([^\"]*)\"|(-?\d+))\]")


def parse_fact_path(path: str) -> tuple[tuple[bool, Any], ...]:
    """The steps of a fact path as rule sets print them (``material.extras['shader']``,
    ``mesh.attributes.TEXCOORD_1``, ``mesh.targets[0]``): ``(is_item, name or index)`` each.

    The one parser of fact paths: expressions report the paths they read in this form
    (:meth:`pipeline.rules.compiled.Compiled.fact_paths`), and keys and explain read them back.
    """
    steps = []
    for name, single, double, index in FACT_PATH_STEP.findall(path):
        if name:
            steps.append((False, name))
        else:
            steps.append((True, int(index) if index else single if single else double))
    return tuple(steps)


def resolve_fact_path(facts: Any, steps: tuple[tuple[bool, Any], ...]) -> Any:
    """The value at a parsed fact path, with the expression language's semantics (absent -> None)."""
    value = facts
    for is_item, name in steps:
        value = get_item(value, name) if is_item else get_attr(value, name)
    return value


def get_item(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict):
        return obj.get(key) if isinstance(key, (str, int, float, bool)) else None
    if isinstance(obj, (tuple, list)) and isinstance(key, int) and not isinstance(key, bool):
        return obj[key] if -len(obj) <= key < len(obj) else None
    return None


def ordered(op: Callable) -> Callable:
    def compare(a: Any, b: Any) -> bool:
        if a is None or b is None:
            return False
        try:
            return op(a, b)
        except TypeError:
            raise EvalError(f"cannot compare {type(a).__name__} with {type(b).__name__}") from None

    return compare


def contains(a: Any, b: Any) -> bool:
    if b is None:
        return False
    if not isinstance(b, (tuple, list, dict, str)):
        raise EvalError(f"'in' needs a list, dict or string, got {type(b).__name__}")
    if isinstance(b, str) and not isinstance(a, str):
        return False
    try:
        return a in b
    except TypeError:
        return False


def set_member(a: Any, b: Any) -> bool:
    """``a in b`` where ``b`` is a set feature's value (its define names joined by ``+``)."""
    return isinstance(a, str) and isinstance(b, str) and a in b.split(SEPARATOR)


COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.Lt: ordered(operator.lt), ast.LtE: ordered(operator.le),
    ast.Gt: ordered(operator.gt), ast.GtE: ordered(operator.ge),
    ast.In: contains, ast.NotIn: lambda a, b: not contains(a, b),
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
OP_TEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
           ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def compare_op(op: ast.cmpop, set_feature: bool = False) -> Callable:
    """The run-time comparison; ``in`` over a set feature is membership among its define names,
    never a substring test on their joined text."""
    if set_feature and isinstance(op, (ast.In, ast.NotIn)):
        return set_member if isinstance(op, ast.In) else (lambda a, b: not set_member(a, b))
    return COMPARE[type(op)]


ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # results beyond these (or inf) are errors, never huge values


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float))


def arith(op: Callable, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if not (is_number(a) and is_number(b)):
        raise EvalError(f"arithmetic needs numbers, got {type(a).__name__} and {type(b).__name__}")
    result = op(a, b)
    if not (INT_MIN <= result <= INT_MAX if isinstance(result, int) else math.isfinite(result)):
        raise EvalError("arithmetic overflow: the result does not fit in a 64-bit number")
    return result


def count_of(x: Any) -> int:
    if x is None:
        return 0
    if isinstance(x, (tuple, list, dict, str)):
        return len(x)
    if isinstance(x, bool):
        return int(x)
    raise EvalError(f"count() needs a list, dict or string, got {type(x).__name__}")


def extreme(pick: Callable) -> Callable:
    def helper(*args: Any) -> Any:
        items = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        items = [v for v in items if v is not None]
        if not items:
            return None
        try:
            return pick(items)
        except TypeError:
            raise EvalError("min()/max() need comparable values") from None

    return helper


def bucket_of(x: Any, buckets: tuple) -> Any:
    if x is None:
        return None
    for b in buckets:
        if ordered(operator.ge)(b, x):
            return b
    return buckets[-1]


def has_attribute(facts: Any, name: Any) -> bool:
    if facts is None:
        raise EvalError("has() needs draw facts")
    return isinstance(name, str) and name in facts.mesh.attributes


