"""Compiling a parsed rule expression: each allowed AST node to a closure and its static type.

:class:`Compiler` walks the tree :func:`~pipeline.rules.expr_syntax.parse` made: literals,
fact and feature names and access into facts (checked against the fact models),
operators (operands checked by :mod:`pipeline.rules.expr_types`), ``x if c else y`` and
the helper calls.  It records the fact paths and features the expression reads.  The
closures take ``(facts, features)`` and use :mod:`pipeline.rules.expr_runtime`, where
absent data is data.
"""

from __future__ import annotations

import ast
import operator
import typing
from typing import Any, Callable

from pipeline.checked import suggest
from pipeline.facts import fact_fields
from pipeline.rules.expr_runtime import (
    ARITH, OP_TEXT, Env, Fn, arith, bucket_of, compare_op, count_of, extreme, get_attr, get_item, has_attribute,
    is_number)
from pipeline.rules.expr_syntax import FACT_ROOTS, HELPERS, REFUSED, ExprError, Scope, dotted
from pipeline.rules.expr_types import (
    ANY, NUMBER_TYPE, SType, compare_problem, has_problem, number_problem, stype_of)


class Compiler:
    """Walks a checked AST and returns (closure, static type) per node."""

    def __init__(self, scope: Scope, text: str, shift: int = 0):
        self.scope, self.text, self.shift = scope, text, shift
        self.facts: set[str] = set()
        self.features: set[str] = set()

    def fail(self, node: ast.AST, message: str) -> typing.NoReturn:
        line = max(getattr(node, "lineno", 1) - self.shift, 1)
        col = getattr(node, "col_offset", 0)
        source_line = self.text.strip("\n").splitlines()[line - 1] if self.text.strip() else ""
        col = len(source_line.encode()[:col].decode(errors="ignore"))
        raise ExprError(message, line, col)

    def compile(self, node: ast.AST) -> tuple[Fn, SType]:
        if type(node) in REFUSED:
            self.fail(node, REFUSED[type(node)])
        method = getattr(self, f"c_{type(node).__name__}", None)
        if method is None:
            self.fail(node, f"{type(node).__name__} is not allowed in rule expressions")
        return method(node)

    # ---- literals
    def c_Constant(self, node: ast.Constant) -> tuple[Fn, SType]:
        value = node.value
        if not (value is None or isinstance(value, (bool, int, float, str))):
            self.fail(node, f"{type(value).__name__} literals are not allowed")
        return (lambda env: value), SType("scalar", values=frozenset([value]))

    def c_List(self, node: ast.List | ast.Tuple) -> tuple[Fn, SType]:
        fns = [self.compile(e)[0] for e in node.elts]
        return (lambda env: tuple(f(env) for f in fns)), SType("seq", Any)

    c_Tuple = c_List

    # ---- names and access
    def c_Name(self, node: ast.Name) -> tuple[Fn, SType]:
        return self._root(node, node.id, node.id)

    def _root(self, node: ast.AST, name: str, path: str) -> tuple[Fn, SType]:
        if name.startswith("_"):
            self.fail(node, f"names starting with '_' are not allowed: '{name}'")
        if name in FACT_ROOTS:
            if not self.scope.facts:
                self.fail(node, f"facts cannot be read here ('{name}'): this expression reads features only")
            self.facts.add(name)
            model = self.scope.ext if name == "ext" else FACT_ROOTS[name]
            return (lambda env: getattr(env[0], name)), SType("model", model, path=name)
        if name in self.scope.features:
            if not self.scope.read_features:
                self.fail(node, f"features cannot be read here ('{name}'): this expression reads facts only")
            self.features.add(name)
            dom = self.scope.features[name]
            return (lambda env: env[1][name]), SType("scalar", values=None if dom.open else frozenset(dom.values),
                                                         feature=dom)
        if name in HELPERS:
            self.fail(node, f"'{name}' is a helper: call it, e.g. {name}(...)")
        self._unknown_name(node, name, path)

    def _unknown_name(self, node: ast.AST, name: str, path: str) -> typing.NoReturn:
        if name.isupper() or not self.scope.facts:
            known = list(self.scope.features) if self.scope.read_features else []
            if name.isupper() and not self.scope.read_features:
                self.fail(node, f"features cannot be read here ('{name}'): this expression reads facts only")
            self.fail(node, f"unknown feature '{name}'{suggest(name, known)}")
        rest = path[len(name):]
        candidates = [root + rest for root in FACT_ROOTS]
        self.fail(node, f"unknown fact '{path}'{suggest(path, candidates)}")

    def c_Attribute(self, node: ast.Attribute) -> tuple[Fn, SType]:
        name = node.attr
        if name.startswith("_"):
            self.fail(node, f"access to '{name}' is not allowed (names starting with '_' are refused)")
        if isinstance(node.value, ast.Name) and node.value.id not in FACT_ROOTS and node.value.id not in \
                self.scope.features:
            self._root(node.value, node.value.id, dotted(node))
        base_fn, base = self.compile(node.value)
        stype = self._field(node, base, name)
        if stype.path:
            self.facts.add(stype.path)
        return (lambda env: get_attr(base_fn(env), name)), stype

    def _field(self, node: ast.AST, base: SType, name: str) -> SType:
        path = f"{base.path}.{name}" if base.path else name
        if base.kind == "model":
            fields = fact_fields(base.model)
            if name not in fields:
                prefix = base.path + "." if base.path else ""
                self.fail(node, f"unknown fact '{path}'{suggest(path, [prefix + f for f in fields])}")
            return stype_of(fields[name].annotation, path)
        if base.kind == "dict":
            return stype_of(base.model, path)
        if base.kind == "any":
            return SType("any", path=path)
        what = f"'{base.path}'" if base.path else "this value"
        self.fail(node, f"unknown fact '{path}': {what} has no fields")

    def c_Subscript(self, node: ast.Subscript) -> tuple[Fn, SType]:
        base_fn, base = self.compile(node.value)
        key_fn, key = self.compile(node.slice)
        const = next(iter(key.values)) if key.values is not None and len(key.values) == 1 else None
        if base.kind == "dict":
            stype = stype_of(base.model, f"{base.path}[{const!r}]" if const is not None else base.path)
        elif base.kind == "seq":
            stype = stype_of(base.model, base.path) if base.path else ANY
        elif base.kind == "any":
            stype = ANY
        else:
            self.fail(node, f"'{base.path or 'this value'}' cannot be subscripted")
        if stype.path:
            self.facts.add(stype.path)
        return (lambda env: get_item(base_fn(env), key_fn(env))), stype

    # ---- operators
    def c_BoolOp(self, node: ast.BoolOp) -> tuple[Fn, SType]:
        fns = [self.compile(v)[0] for v in node.values]
        if isinstance(node.op, ast.And):
            def run(env: Env) -> Any:
                result = True
                for f in fns:
                    result = f(env)
                    if not result:
                        return result
                return result
        else:
            def run(env: Env) -> Any:
                result = False
                for f in fns:
                    result = f(env)
                    if result:
                        return result
                return result
        return run, ANY

    def c_UnaryOp(self, node: ast.UnaryOp) -> tuple[Fn, SType]:
        fn, _ = self.compile(node.operand)
        if isinstance(node.op, ast.Not):
            return (lambda env: not fn(env)), SType("scalar", bool, frozenset([True, False]))
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            self._problem(node, number_problem(_, ast.unparse(node.operand), "unary minus and plus"))
            sign = -1 if isinstance(node.op, ast.USub) else 1
            return (lambda env: arith(operator.mul, sign, fn(env))), NUMBER_TYPE
        self.fail(node, "the operator ~ is not allowed")

    def c_BinOp(self, node: ast.BinOp) -> tuple[Fn, SType]:
        op = ARITH.get(type(node.op))
        if op is None:
            self.fail(node, f"the operator {type(node.op).__name__} is not allowed (only + - *)")
        (left, lt), (right, rt) = self.compile(node.left), self.compile(node.right)
        for t, side in ((lt, node.left), (rt, node.right)):
            self._problem(side, number_problem(t, ast.unparse(side), "arithmetic"))
        return (lambda env: arith(op, left(env), right(env))), NUMBER_TYPE

    def _problem(self, node: ast.AST, problem: str | None) -> None:
        if problem:
            self.fail(node, problem)

    def c_Compare(self, node: ast.Compare) -> tuple[Fn, SType]:
        operands = [node.left, *node.comparators]
        compiled = [self.compile(o) for o in operands]
        for i, op in enumerate(node.ops):
            self._check_literal(node, compiled[i][1], operands[i + 1], op)
            self._check_literal(node, compiled[i + 1][1], operands[i], op)
            self._problem(operands[i], compare_problem(OP_TEXT[type(op)], compiled[i][1], compiled[i + 1][1],
                                                       ast.unparse(operands[i]), ast.unparse(operands[i + 1])))
        fns = [c[0] for c in compiled]
        ops = [compare_op(op, (t := compiled[i + 1][1]).feature is not None and t.feature.kind == "set")
               for i, op in enumerate(node.ops)]

        def run(env: Env) -> bool:
            left = fns[0](env)
            for op, f in zip(ops, fns[1:]):
                right = f(env)
                if not op(left, right):
                    return False
                left = right
            return True

        return run, SType("scalar", bool, frozenset([True, False]))

    def _check_literal(self, node: ast.AST, known: SType, other: ast.AST, op: ast.cmpop) -> None:
        """A literal compared with a feature or a Literal fact must be one of its values."""
        if known.values is None or (known.feature is None and known.path is None):
            return
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(other, (ast.List, ast.Tuple)):
            literals = other.elts
        elif isinstance(op, (ast.Eq, ast.NotEq)):
            literals = [other]
        else:
            return
        for lit in literals:
            if isinstance(lit, ast.Constant) and isinstance(lit.value, str) and lit.value not in known.values:
                strings = sorted(str(v) for v in known.values if isinstance(v, str))
                owner = known.feature.name if known.feature else known.path
                self.fail(lit, f"'{lit.value}' is not a value of {owner}{suggest(lit.value, strings)}")

    def c_IfExp(self, node: ast.IfExp) -> tuple[Fn, SType]:
        test, _ = self.compile(node.test)
        body, b = self.compile(node.body)
        orelse, o = self.compile(node.orelse)
        values = b.values | o.values if b.values is not None and o.values is not None else None
        return (lambda env: body(env) if test(env) else orelse(env)), SType("scalar", values=values)

    # ---- calls
    def c_Call(self, node: ast.Call) -> tuple[Fn, SType]:
        name = self._helper_name(node)
        if node.keywords:
            self.fail(node.keywords[0].value, f"keyword arguments are not allowed in {name}()")
        low, high = HELPERS[name]
        if len(node.args) < low or (high is not None and len(node.args) > high):
            expected = f"{low}" if low == high else f"at least {low}"
            self.fail(node, f"{name}() takes {expected} argument(s), got {len(node.args)}")
        return getattr(self, f"h_{name}")(node)

    def _helper_name(self, node: ast.Call) -> str:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "mesh" \
                and func.attr == "has":
            if not self.scope.facts:
                self.fail(node, "facts cannot be read here ('mesh'): this expression reads features only")
            return "has"
        if isinstance(func, ast.Name) and func.id in HELPERS:
            return func.id
        for sub in ast.walk(func):
            if type(sub) in REFUSED:
                self.fail(sub, REFUSED[type(sub)])
            name = sub.attr if isinstance(sub, ast.Attribute) else getattr(sub, "id", "")
            if name.startswith("_"):
                self.fail(sub, f"access to '{name}' is not allowed (names starting with '_' are refused)")
        what = dotted(func) or ast.unparse(func)[:40]
        self.fail(node, f"calls are not allowed ('{what}'): only has(), count(), min(), max() and bucket()")

    def h_has(self, node: ast.Call) -> tuple[Fn, SType]:
        if not self.scope.facts:
            self.fail(node, "has() reads mesh facts and cannot be used here")
        arg, t = self.compile(node.args[0])
        self._problem(node.args[0], has_problem(t, ast.unparse(node.args[0])))
        if t.values is not None and len(t.values) == 1:
            self.facts.add(f"mesh.attributes[{next(iter(t.values))!r}]")
        else:
            self.facts.add("mesh.attributes")
        return (lambda env: has_attribute(env[0], arg(env))), SType("scalar", bool, frozenset([True, False]))

    def h_count(self, node: ast.Call) -> tuple[Fn, SType]:
        arg, _ = self.compile(node.args[0])
        return (lambda env: count_of(arg(env))), SType("scalar", int)

    def h_min(self, node: ast.Call, pick: Callable = min) -> tuple[Fn, SType]:
        fns = [self.compile(a)[0] for a in node.args]
        helper = extreme(pick)
        return (lambda env: helper(*(f(env) for f in fns))), ANY

    def h_max(self, node: ast.Call) -> tuple[Fn, SType]:
        return self.h_min(node, max)

    def h_bucket(self, node: ast.Call) -> tuple[Fn, SType]:
        arg, _ = self.compile(node.args[0])
        spec = node.args[1]
        if not isinstance(spec, (ast.List, ast.Tuple)) or not spec.elts or not all(
                isinstance(e, ast.Constant) and is_number(e.value) and not isinstance(e.value, bool)
                for e in spec.elts):
            self.fail(spec, "bucket() needs a literal, non-empty list of numbers, e.g. bucket(x, [0, 1, 2, 4])")
        buckets = tuple(e.value for e in spec.elts)  # type: ignore[attr-defined]
        if list(buckets) != sorted(buckets):
            self.fail(spec, "bucket() needs its buckets in ascending order")
        return (lambda env: bucket_of(arg(env), buckets)), SType("scalar", int, frozenset(buckets) | {None})
