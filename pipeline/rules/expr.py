"""The safe expression language of rule sets.

An expression is parsed once with :mod:`ast` (``mode='eval'``), checked against a
whitelist and compiled to nested closures; raw text is never given to ``eval``.

Allowed:

* literals (strings, numbers, ``True``/``False``/``None``, lists and tuples of them);
* names: fact roots (``mesh``, ``material``, ``node``, ``scene``, ``chunk``) where the
  context reads facts, and feature names (``NORMAL_MAP``) where it reads features;
* attribute and subscript access on facts (``material.extras['shader']``,
  ``mesh.attributes.TEXCOORD_1``); names starting with ``_`` are refused;
* comparisons (``== != < <= > >= in not in is is not``), ``and``/``or``/``not``,
  ``x if c else y``, arithmetic ``+ - *`` and unary ``-``;
* the helpers ``has(name)`` (the mesh has that vertex attribute, also written
  ``mesh.has(name)``), ``count(x)`` (length, 0 for None), ``min(...)``, ``max(...)``
  and ``bucket(x, [b0, b1, ...])`` (the smallest bucket >= x, else the last one).

Refused, with a located error: every other call, lambdas, comprehensions, f-strings,
``:=``, dict/set literals, slices, starred arguments, keyword arguments.

Semantics chosen so that absent data never crashes a build:

* attribute or subscript access on ``None`` (an absent extension or texture) is
  ``None``: ``material.clearcoat.clearcoatFactor > 0`` is ``False`` for a material
  without clearcoat;
* an ordering comparison (``< <= > >=``) with ``None`` on either side is ``False``;
  arithmetic with ``None`` gives ``None``; ``x in None`` is ``False``;
* a missing key of a dict fact (``material.extras.shader``) is ``None``.

Operands whose type is known when the rule set loads must suit their operator, or the
expression is a located error (:mod:`pipeline.rules.expr_types`): arithmetic on a string,
``<`` between a string and a number, ``==`` that can never hold, ``has(mesh)``, ``x in y``
where ``y`` cannot hold ``x``.  What only the content decides (a value in ``extras``, an
overflow) fails at run time as :class:`EvalError`.  ``x in FEATURE`` over a set feature is
membership among its define names, never a substring of their joined text.

Every fact path is checked against the fact models of :mod:`pipeline.facts`
when the expression is compiled; every feature name against the feature table.

This module holds the compiled form (:class:`Expr`) and :func:`compile_expr`; what the
language accepts and how it is parsed is :mod:`pipeline.rules.expr_syntax`, each node's
closure and static type :mod:`pipeline.rules.expr_compiler`, the static types
:mod:`pipeline.rules.expr_types` and the run-time helpers :mod:`pipeline.rules.expr_runtime`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pipeline.facts import fact_fields
from pipeline.rules.expr_compiler import Compiler
from pipeline.rules.expr_runtime import EvalError, Fn  # noqa: F401  (EvalError re-exported)
from pipeline.rules.expr_syntax import (  # noqa: F401  (ExprError, Scope re-exported)
    FACT_ROOTS, MAX_LENGTH, ExprError, Scope, check_depth, parse)
from pipeline.rules.expr_types import ANY, Domain, SType  # noqa: F401  (Domain re-exported)


# ------------------------------------------------------------------ compiled form
@dataclass(frozen=True)
class Expr:
    """A compiled expression: call it with facts and/or feature values."""

    text: str
    fn: Fn = field(repr=False, compare=False)
    facts: frozenset[str] = frozenset()
    features: frozenset[str] = frozenset()
    values: frozenset | None = None
    stype: SType = field(default=ANY, repr=False, compare=False)  # static type of the result

    def __call__(self, facts: Any = None, features: Mapping[str, Any] | None = None) -> Any:
        return self.fn((facts, features))

    @property
    def constant(self) -> bool:
        return not self.facts and not self.features


def compile_expr(text: Any, scope: Scope) -> Expr:
    """Parse, check and compile ``text``; raise :class:`ExprError` located in the text."""
    if isinstance(text, bool) or text is None or isinstance(text, (int, float)):
        return Expr(repr(text), lambda env, v=text: v, values=frozenset([text]))
    if not isinstance(text, str):
        raise ExprError(f"an expression must be a string, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    tree, shift = parse(text)
    check_depth(tree)
    compiler = Compiler(scope, text, shift)
    fn, stype = compiler.compile(tree.body)
    return Expr(text, fn, _leaves(compiler.facts), frozenset(compiler.features), stype.values, stype)


def _leaves(paths: set[str]) -> frozenset[str]:
    """Drop paths that are a prefix of a longer one read by the same expression."""
    return frozenset(p for p in paths if not any(o != p and (o.startswith(p + ".") or o.startswith(p + "["))
                                                  for o in paths))


def buffer_facts() -> frozenset[str]:
    """Fact paths that need buffer data (their description says so)."""
    found = set()
    for root, model in FACT_ROOTS.items():
        for name, info in fact_fields(model).items():
            if "needs buffer data" in info.description:
                found.add(f"{root}.{name}")
    return frozenset(found)
