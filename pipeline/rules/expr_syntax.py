"""What the rule expression language accepts, before anything is compiled.

The names an expression may start from (:data:`FACT_ROOTS`, the fields of
:class:`~pipeline.facts.DrawFacts`; feature names come from its :class:`Scope`), the
helpers it may call (:data:`HELPERS`, with their argument counts), the Python syntax it
refuses with a reason (:data:`REFUSED`), and parsing with :mod:`ast` under limits on
length and nesting.  Every problem is an :class:`ExprError` located inside the text.
"""

from __future__ import annotations

import ast
from typing import Mapping

import msgspec

from pipeline.facts import DrawFacts, ProvidedFacts, fact_fields
from pipeline.rules.expr_types import Domain

MAX_LENGTH = 2000
MAX_DEPTH = 100
FACT_ROOTS: dict[str, type] = {
    name: info.annotation for name, info in fact_fields(DrawFacts).items()
} | {"ext": ProvidedFacts}  # provided facts: a rule set's own model (Scope.ext), from its fact providers
HELPERS = {"has": (1, 1), "count": (1, 1), "min": (1, None), "max": (1, None), "bucket": (2, 2)}


class ExprError(Exception):
    """An expression is invalid; ``line``/``col`` are 1-based inside the expression text."""

    def __init__(self, message: str, line: int = 1, col: int = 0):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


class Scope(msgspec.Struct):
    """What an expression may read: facts (in a per-draw context) and/or features."""

    facts: bool
    features: Mapping[str, Domain] = msgspec.field(default_factory=dict)
    read_features: bool = True
    ext: type = ProvidedFacts  # what ``ext.<provider>.<fact>`` may read: the rule set's fact providers


REFUSED = {
    ast.Lambda: "lambdas are not allowed",
    ast.ListComp: "comprehensions are not allowed", ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed", ast.GeneratorExp: "comprehensions are not allowed",
    ast.NamedExpr: "assignments (:=) are not allowed", ast.JoinedStr: "f-strings are not allowed",
    ast.Dict: "dict literals are not allowed", ast.Set: "set literals are not allowed",
    ast.Starred: "starred expressions are not allowed", ast.Slice: "slices are not allowed",
    ast.Await: "await is not allowed", ast.Yield: "yield is not allowed", ast.YieldFrom: "yield is not allowed",
}


def parse(text: str) -> tuple[ast.Expression, int]:
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


def check_depth(tree: ast.AST) -> None:
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExprError(f"expression is too deeply nested (more than {MAX_DEPTH} levels)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""
