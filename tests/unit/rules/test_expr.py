"""rules.expr: compile_expr and the compiled form Expr."""

from __future__ import annotations

import pytest
from rules_fixtures import facts, mesh, texture

from pipeline.rules.expr import Domain, ExprError, Scope, buffer_facts, compile_expr


def test_a_literal_compiles_to_a_constant() -> None:
    expr = compile_expr(True, Scope(facts=False))
    assert expr.constant and expr() is True and expr.values == frozenset([True])


def test_an_expression_reports_only_the_deepest_fact_paths_it_reads() -> None:
    expr = compile_expr("material.normalTexture is not None and material.normalTexture.uv == 1", Scope(facts=True))
    assert expr.facts == frozenset(["material.normalTexture.uv"])
    assert expr(facts(material={"normalTexture": texture(uv=1)})) is True
    assert expr(facts(mesh("NORMAL"))) is False


def test_feature_reads_and_values_are_kept() -> None:
    scope = Scope(facts=False, features={"UV_SETS": Domain("UV_SETS", "int", (0, 1, 2))})
    expr = compile_expr("UV_SETS if UV_SETS < 2 else 2", scope)
    assert expr.features == frozenset(["UV_SETS"]) and not expr.constant
    assert expr(None, {"UV_SETS": 1}) == 1


def test_too_long_and_non_string_texts_are_refused() -> None:
    with pytest.raises(ExprError, match="too long"):
        compile_expr("1 + " * 600 + "1", Scope(facts=False))
    with pytest.raises(ExprError, match="must be a string"):
        compile_expr(["mesh"], Scope(facts=True))


def test_buffer_facts_are_the_facts_that_need_buffer_data() -> None:
    assert buffer_facts() == frozenset(["mesh.colorAllWhite", "mesh.maxJointInfluences"])
