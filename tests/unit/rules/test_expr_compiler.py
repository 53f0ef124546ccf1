"""rules.expr_compiler: each node to a closure and its static type, with what it reads."""

from __future__ import annotations

import pytest
from rules_fixtures import facts, mesh

from pipeline.rules.expr_compiler import Compiler
from pipeline.rules.expr_syntax import ExprError, Scope, parse
from pipeline.rules.expr_types import Domain

FEATURES = {"ALPHA_MODE": Domain("ALPHA_MODE", "enum", ("OPAQUE", "MASK", "BLEND")),
            "SKINNING": Domain("SKINNING", "int", (0, 4, 8))}


def compiled(text: str, scope: Scope):
    tree, shift = parse(text)
    compiler = Compiler(scope, text, shift)
    fn, stype = compiler.compile(tree.body)
    return compiler, fn, stype


def test_fact_access_is_recorded_and_runs_on_facts() -> None:
    compiler, fn, stype = compiled("mesh.texcoordSets + 1", Scope(facts=True))
    assert compiler.facts >= {"mesh.texcoordSets"}
    assert compiler.features == set()
    assert fn((facts(mesh("TEXCOORD_0", "TEXCOORD_1")), None)) == 3
    assert stype.kind == "scalar"


def test_a_feature_comparison_knows_its_values_and_features() -> None:
    compiler, fn, stype = compiled("ALPHA_MODE == 'MASK'", Scope(facts=False, features=FEATURES))
    assert compiler.features == {"ALPHA_MODE"}
    assert stype.values == frozenset([True, False])
    assert fn((None, {"ALPHA_MODE": "MASK"})) is True
    assert fn((None, {"ALPHA_MODE": "BLEND"})) is False


def test_an_unknown_fact_names_the_closest_one() -> None:
    with pytest.raises(ExprError, match=r"unknown fact 'mesh\.normal' \(did you mean 'mesh\.normals'\?\)"):
        compiled("mesh.normal", Scope(facts=True))


def test_a_literal_outside_a_feature_domain_is_located_at_the_literal() -> None:
    with pytest.raises(ExprError) as info:
        compiled("ALPHA_MODE == 'MASKED'", Scope(facts=False, features=FEATURES))
    assert "'MASKED' is not a value of ALPHA_MODE (did you mean 'MASK'?)" in info.value.message
    assert info.value.col == len("ALPHA_MODE == ")


def test_features_cannot_be_read_where_only_facts_are() -> None:
    with pytest.raises(ExprError, match="features cannot be read here"):
        compiled("SKINNING > 0", Scope(facts=True, features=FEATURES, read_features=False))


def test_helper_calls_check_their_arguments() -> None:
    _, fn, stype = compiled("bucket(node.skinJoints, [0, 4, 8])", Scope(facts=True))
    assert fn((facts(node={"skin": True, "skinJoints": 3}), None)) == 4
    assert stype.values == frozenset([0, 4, 8, None])
    with pytest.raises(ExprError, match=r"bucket\(\) takes 2 argument"):
        compiled("bucket(1)", Scope(facts=True))
    with pytest.raises(ExprError, match="calls are not allowed"):
        compiled("open('x')", Scope(facts=True))
