"""rules.compiled: the compiled form of a rule set and the feature values it holds."""

from __future__ import annotations

import pytest
from rules_fixtures import facts, mesh, small_ruleset

from pipeline.errors import Location, RuleError
from pipeline.rules.compiled import RENDER_STATE, Located, default_value, in_domain, same_value
from pipeline.rules.expr import Domain, Scope, compile_expr


def test_values_in_a_domain_match_by_type_too() -> None:
    skinning = Domain("SKINNING", "int", (0, 4, 8))
    assert in_domain(skinning, 4) and not in_domain(skinning, 5)
    assert not in_domain(Domain("B", "bool", (False, True)), 1)  # 1 is not True here
    assert in_domain(Domain("N", "int", (0,), open=True), 123)
    assert in_domain(Domain("DOC", "name", ("a.mtlx#M",)), "b.mtlx#Other")
    assert not in_domain(Domain("DOC", "name", ("a.mtlx#M",)), "has space")
    assert default_value(skinning) == 0
    assert same_value(1, 1) and not same_value(1, True)


def test_a_located_expression_turns_an_evaluation_error_into_a_located_rule_error() -> None:
    located = Located(compile_expr("material.extras.k < 1", Scope(facts=True)), Location("rules/t.yaml", 7, 3))
    assert located.run(facts(material={"extras": {"k": 0}})) is True
    with pytest.raises(RuleError) as info:
        located.run(facts(material={"extras": {"k": "text"}}))
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.location.line, diagnostic.location.col) == (7, 3)
    assert "cannot evaluate 'material.extras.k < 1'" in diagnostic.message


def test_a_compiled_family_lists_every_fact_path_it_reads() -> None:
    rs = small_ruleset({"NORMAL_MAP": {"type": "bool"}}, derive={"NORMAL_MAP": "mesh.normals"},
                       render_state={"cull": "'none' if material.doubleSided else 'back'"})
    compiled = rs.compiled
    assert compiled.fact_paths() >= {"mesh.normals", "material.doubleSided"}
    assert compiled.domains["NORMAL_MAP"].values == (False, True)
    assert set(compiled.passes["main"].render_state) == {"cull"}
    assert compiled.passes["main"].render_state["cull"].run(facts(mesh("NORMAL")), {"NORMAL_MAP": True}) == "back"


def test_render_states_and_their_values() -> None:
    assert RENDER_STATE["cull"] == ("none", "back", "front")
    assert set(RENDER_STATE) == {"blend", "cull", "front_face", "depth_write", "depth_test"}
