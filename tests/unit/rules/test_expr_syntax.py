"""rules.expr_syntax: what the expression language accepts, and parsing within limits."""

from __future__ import annotations

import ast

import pytest

from pipeline.rules.expr_syntax import (FACT_ROOTS, HELPERS, MAX_DEPTH, REFUSED, ExprError, check_depth, dotted,
                                        parse)


def test_fact_roots_are_the_draw_fact_groups() -> None:
    assert sorted(FACT_ROOTS) == ["chunk", "draw", "ext", "material", "mesh", "node", "scene"]
    assert FACT_ROOTS["mesh"].__name__ == "MeshFacts"


def test_helpers_take_their_argument_counts() -> None:
    assert HELPERS["bucket"] == (2, 2)
    assert HELPERS["min"] == (1, None)


def test_a_multi_line_text_is_parenthesized_and_its_lines_kept() -> None:
    tree, shift = parse("mesh.normals\nand mesh.tangents")
    assert shift == 1
    assert isinstance(tree.body, ast.BoolOp)
    assert parse("mesh.normals")[1] == 0


def test_a_syntax_error_is_located_in_the_text() -> None:
    with pytest.raises(ExprError) as info:
        parse("mesh.normals and\n  (")
    assert info.value.message.startswith("invalid expression")
    assert info.value.line >= 1


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    deep = "-" * (MAX_DEPTH + 5) + "1"
    tree, _ = parse(deep)
    with pytest.raises(ExprError, match="too deeply nested"):
        check_depth(tree)
    check_depth(parse("-1")[0])  # shallow trees pass


def test_refused_syntax_says_why() -> None:
    assert REFUSED[ast.Lambda] == "lambdas are not allowed"
    assert REFUSED[ast.NamedExpr] == "assignments (:=) are not allowed"


def test_dotted_names_a_chain_of_attributes_only() -> None:
    assert dotted(parse("material.extras.shader")[0].body) == "material.extras.shader"
    assert dotted(parse("f(x).y")[0].body) == ""
