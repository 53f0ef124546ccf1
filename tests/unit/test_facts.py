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
    assert list(DrawFacts.model_fields) == ["mesh", "material", "node", "scene", "chunk", "draw", "ext"]
    assert facts().material.clearcoat is None  # an absent extension is None


def test_facts_dumped_through_shared_parts_are_their_model_dump() -> None:
    """Dumping each shared part once gives every draw's facts exactly ``model_dump(mode="json")``."""
    from pipeline import api
    from pipeline.scan.scanner import scan
    from paths import REPO, SAMPLE_WORLD

    for root in (SAMPLE_WORLD, REPO / "corpus"):
        draws = scan(api.open_world(root), jobs=1).draws
        parts: dict = {}
        assert [d.facts.to_json(parts) for d in draws] == [d.facts.model_dump(mode="json") for d in draws]
        assert len(parts) < 6 * len({id(d.facts) for d in draws})  # parts were shared
