"""facts: the fact vocabulary shared by the rule sets and the scanner."""

from __future__ import annotations

from rules_fixtures import draw, facts, mesh

from pipeline.facts import DrawFacts


def test_equal_facts_share_a_signature_wherever_the_draw_comes_from() -> None:
    one, two = draw(facts(mesh("NORMAL")), file="a.gltf"), draw(facts(mesh("NORMAL")), file="b.gltf", node=3)
    assert one.source != two.source
    assert one.facts.signature() == two.facts.signature()
    assert facts(mesh("NORMAL", "TANGENT")).signature() != one.facts.signature()


def test_the_fact_groups_are_what_rules_may_read() -> None:
    assert list(DrawFacts.model_fields) == ["mesh", "material", "node", "scene", "chunk", "draw"]
    assert facts().material.clearcoat is None  # an absent extension is None
