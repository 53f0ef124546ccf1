"""The compiled form of a rule set, and the feature values it holds.

:func:`~pipeline.rules.build.compile_ruleset` turns a validated
:class:`~pipeline.rules.models.RuleSet` into a :class:`Compiled`: every expression
compiled once and kept with where it was written (:class:`Located`), the derive cases,
the normalize rules and, per pass, the features it reads, its skip condition, render
state and extra defines.  The values a feature may take are checked here
(:func:`in_domain`, :func:`default_value`; :func:`format_value` from
:mod:`pipeline.rules.emit`); :data:`RENDER_STATE` names the render states and their values.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from pipeline.errors import Diagnostic, Location, RuleError
from pipeline.rules.emit import FeatureValue, format_value  # noqa: F401  (re-exported)
from pipeline.rules.expr import Domain, EvalError, Expr

RENDER_STATE: dict[str, tuple] = {
    "blend": (False, True), "cull": ("none", "back", "front"), "front_face": ("ccw", "cw"),
    "depth_write": (False, True), "depth_test": (False, True),
}

class Located(msgspec.Struct, frozen=True):
    """A compiled expression and where it was written."""

    expr: Expr
    location: Location

    def run(self, facts: Any = None, features: Any = None) -> Any:
        """The expression's value; an evaluation error is a RuleError located here."""
        try:
            return self.expr(facts, features)
        except EvalError as exc:
            raise RuleError(Diagnostic(self.location, f"cannot evaluate '{self.expr.text}': {exc}")) from None


class CompiledCase(msgspec.Struct, frozen=True):
    when: Located | None
    value: Any  # a literal feature value, or a Located expression
    location: Location


class CompiledRule(msgspec.Struct, frozen=True, eq=False):
    """A normalize rule ready to run; ``pass_name`` is None for family-wide rules."""

    index: int
    pass_name: str | None
    when: Located
    set: dict[str, Any]
    location: Location
    implicit: bool = False  # made from a feature's when: (reset to its default otherwise)

    def reads(self) -> frozenset[str]:
        return self.when.expr.features

    def scope(self) -> frozenset[str]:
        return self.reads() | frozenset(self.set)

    def fires(self, values: dict[str, Any]) -> bool:
        return bool(self.when.run(None, values))

    def changes(self, values: dict[str, Any]) -> bool:
        return any(not same_value(values[f], v) for f, v in self.set.items())


class CompiledDefine(msgspec.Struct, frozen=True):
    value: Any
    when: Located | None


class CompiledPass(msgspec.Struct, frozen=True):
    name: str
    features: tuple[str, ...]  # every feature the pass reads, in table order
    static: tuple[str, ...]  # its static features, sorted: the key's features
    skip: Located | None
    rules: tuple[CompiledRule, ...]  # family rules, then the pass's own
    render_state: dict[str, Located]
    defines: dict[str, CompiledDefine]


class Compiled(msgspec.Struct, frozen=True):
    select: Located
    domains: dict[str, Domain]
    modes: dict[str, str]
    constant_ids: dict[str, int]
    derive: dict[str, tuple[CompiledCase, ...]]
    passes: dict[str, CompiledPass]
    feature_locations: dict[str, Location]
    fragments: tuple[tuple[str, Located | None], ...] = ()  # (file, when over features), chain order
    feature_when: dict[str, Located] = None  # type: ignore[assignment]  # feature -> its when: condition
    axes: dict[str, tuple] = None  # type: ignore[assignment]  # runtime axis -> the values cooked (rules/axes.py)
    providers: tuple = ()  # the fact providers its expressions may read (pipeline.fact_providers.ProviderSpec)

    def fact_paths(self) -> frozenset[str]:
        """Every fact path an expression of the family reads."""
        exprs = [self.select.expr]
        for cases in self.derive.values():
            exprs += [c.when.expr for c in cases if c.when]
            exprs += [c.value.expr for c in cases if isinstance(c.value, Located)]
        for p in self.passes.values():
            exprs += [s.expr for s in p.render_state.values()]
        return frozenset().union(*(e.facts for e in exprs))


def same_value(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)


NAME_VALUE = re.compile(r"^[A-Za-z0-9_./#:-]+$")


def in_domain(domain: Domain, value: Any) -> bool:
    if domain.kind == "name":  # an open set: any reference-shaped string
        return isinstance(value, str) and NAME_VALUE.match(value) is not None
    if domain.open:
        return type(value) is (int if domain.kind == "int" else str)
    return any(same_value(value, v) for v in domain.values)


def default_value(domain: Domain) -> Any:
    return domain.values[0]
