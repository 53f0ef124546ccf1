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

Every fact path is checked against the pydantic models of :mod:`pipeline.facts`
when the expression is compiled; every feature name against the feature table.
"""

from __future__ import annotations

import ast
import operator
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pydantic import BaseModel

from pipeline.facts import DrawFacts
from pipeline.rules.expr_runtime import (  # noqa: F401  (EvalError, get_attr, get_item re-exported)
    ARITH, OP_TEXT, Env, EvalError, Fn, arith, bucket_of, compare_op, count_of, extreme, get_attr, get_item,
    has_attribute, is_number)
from pipeline.rules.expr_types import (  # noqa: F401  (Domain, suggest re-exported)
    ANY, NUMBER_TYPE, Domain, SType, compare_problem, has_problem, number_problem, stype_of, suggest)

MAX_LENGTH = 2000
MAX_DEPTH = 100
FACT_ROOTS: dict[str, type[BaseModel]] = {
    name: info.annotation for name, info in DrawFacts.model_fields.items()  # type: ignore[misc]
}
HELPERS = {"has": (1, 1), "count": (1, 1), "min": (1, None), "max": (1, None), "bucket": (2, 2)}


class ExprError(Exception):
    """An expression is invalid; ``line``/``col`` are 1-based inside the expression text."""

    def __init__(self, message: str, line: int = 1, col: int = 0):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


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


@dataclass
class Scope:
    """What an expression may read: facts (in a per-draw context) and/or features."""

    facts: bool
    features: Mapping[str, Domain] = field(default_factory=dict)
    read_features: bool = True


def compile_expr(text: Any, scope: Scope) -> Expr:
    """Parse, check and compile ``text``; raise :class:`ExprError` located in the text."""
    if isinstance(text, bool) or text is None or isinstance(text, (int, float)):
        return Expr(repr(text), lambda env, v=text: v, values=frozenset([text]))
    if not isinstance(text, str):
        raise ExprError(f"an expression must be a string, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    tree, shift = _parse(text)
    _check_depth(tree)
    compiler = _Compiler(scope, text, shift)
    fn, stype = compiler.compile(tree.body)
    return Expr(text, fn, _leaves(compiler.facts), frozenset(compiler.features), stype.values, stype)


def _leaves(paths: set[str]) -> frozenset[str]:
    """Drop paths that are a prefix of a longer one read by the same expression."""
    return frozenset(p for p in paths if not any(o != p and (o.startswith(p + ".") or o.startswith(p + "["))
                                                  for o in paths))


def _parse(text: str) -> tuple[ast.Expression, int]:
    """The AST and how many lines were added in front (a multi-line text is parenthesized)."""
    text = text.strip("\n")
    shift = 1 if "\n" in text else 0
    source = f"(\n{text}\n)" if shift else text
    try:
        return ast.parse(source, mode="eval"), shift
    except SyntaxError as exc:
        line, col = max((exc.lineno or 1) - shift, 1), max((exc.offset or 1) - 1, 0)
        raise ExprError(f"invalid expression: {exc.msg}", line, col) from None
    except (RecursionError, MemoryError, ValueError):
        raise ExprError("expression is too deeply nested") from None


def _check_depth(tree: ast.AST) -> None:
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExprError(f"expression is too deeply nested (more than {MAX_DEPTH} levels)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


REFUSED = {
    ast.Lambda: "lambdas are not allowed",
    ast.ListComp: "comprehensions are not allowed", ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed", ast.GeneratorExp: "comprehensions are not allowed",
    ast.NamedExpr: "assignments (:=) are not allowed", ast.JoinedStr: "f-strings are not allowed",
    ast.Dict: "dict literals are not allowed", ast.Set: "set literals are not allowed",
    ast.Starred: "starred expressions are not allowed", ast.Slice: "slices are not allowed",
    ast.Await: "await is not allowed", ast.Yield: "yield is not allowed", ast.YieldFrom: "yield is not allowed",
}


class _Compiler:
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
            return (lambda env: getattr(env[0], name)), SType("model", FACT_ROOTS[name], path=name)
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
            self._root(node.value, node.value.id, _dotted(node))
        base_fn, base = self.compile(node.value)
        stype = self._field(node, base, name)
        if stype.path:
            self.facts.add(stype.path)
        return (lambda env: get_attr(base_fn(env), name)), stype

    def _field(self, node: ast.AST, base: SType, name: str) -> SType:
        path = f"{base.path}.{name}" if base.path else name
        if base.kind == "model":
            fields = base.model.model_fields
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
        what = _dotted(func) or ast.unparse(func)[:40]
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


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def buffer_facts() -> frozenset[str]:
    """Fact paths that need buffer data (their description says so)."""
    found = set()
    for root, model in FACT_ROOTS.items():
        for name, info in model.model_fields.items():
            if "needs buffer data" in (info.description or ""):
                found.add(f"{root}.{name}")
    return frozenset(found)
