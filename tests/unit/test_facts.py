"""facts: the fact vocabulary shared by the rule sets and the scanner."""

from __future__ import annotations

import gc
import json
from typing import Literal, Optional

import msgspec
import pytest
from rules_fixtures import draw, facts, mesh

from pipeline import facts as F
from pipeline.digest import canonical_bytes, stable_hash
from pipeline.facts import DrawFacts, dump, fact_fields


def test_equal_facts_share_a_signature_wherever_the_draw_comes_from() -> None:
    one, two = draw(facts(mesh("NORMAL")), file="a.gltf"), draw(facts(mesh("NORMAL")), file="b.gltf", node=3)
    assert one.source != two.source
    assert one.facts.signature() == two.facts.signature()
    assert facts(mesh("NORMAL", "TANGENT")).signature() != one.facts.signature()


def test_the_fact_groups_are_what_rules_may_read() -> None:
    assert list(fact_fields(DrawFacts)) == ["mesh", "material", "node", "scene", "chunk", "draw", "ext"]
    assert facts().material.clearcoat is None  # an absent extension is None


def test_facts_dumped_through_shared_parts_are_their_dump() -> None:
    """Dumping each shared part once gives every draw's facts exactly :func:`dump`."""
    from pipeline import api
    from pipeline.scan.scanner import scan
    from paths import REPO, SAMPLE_WORLD

    for root in (SAMPLE_WORLD, REPO / "corpus"):
        draws = scan(api.open_world(root), jobs=1).draws
        parts: dict = {}
        assert [d.facts.to_json(parts) for d in draws] == [dump(d.facts) for d in draws]
        assert len(parts) < 6 * len({id(d.facts) for d in draws})  # parts were shared


# ---------------------------------------------------------------- the models as structs
TEXTURE = {"index": 2, "texCoord": 1, "transform": True, "uv": 1}


def test_facts_are_frozen_hashable_and_outside_the_collector() -> None:
    ref = F.TextureRef(**TEXTURE)
    with pytest.raises(AttributeError):
        ref.index = 5  # type: ignore[misc]
    assert hash(ref) == hash(F.TextureRef(**TEXTURE)) and {ref, F.TextureRef(**TEXTURE)} == {ref}
    assert not gc.is_tracked(ref) and not gc.is_tracked(facts())  # a cook holds many: no collector walks them


def test_a_default_factory_runs_once_per_object() -> None:
    first, second = F.MaterialFacts(), F.MaterialFacts()
    assert first.extras == {} == second.extras and first.extras is not second.extras


def test_fields_keep_their_meaning_type_and_default() -> None:
    fields = fact_fields(F.MeshFacts)
    assert fields["vertexCount"] == F.FactField(int, "count of the POSITION accessor", msgspec.NODEFAULT)
    assert fields["colorType"].annotation == Optional[Literal["VEC3", "VEC4"]]  # the meaning taken off the type
    assert fields["mode"].default == 4 and fact_fields(F.MaterialFacts)["extras"].default == {}
    assert fact_fields(F.PbrMetallicRoughness)["metallicFactor"].description == ""  # glTF's own: no text of ours
    assert F.is_model(F.Lights) and not F.is_model(dict) and not F.is_model(F.Lights())


def test_dump_gives_json_data_and_leaves_out_empty_provided_facts() -> None:
    plain = facts(material={"extensions": ["KHR_materials_unlit"], "unlit": True})
    doc = dump(plain)
    assert "ext" not in doc and doc["material"]["extensions"] == ["KHR_materials_unlit"]  # a list, not a tuple
    assert json.loads(json.dumps(doc)) == doc
    wet = F.replace(plain, ext={"wet": {"level": 0.5}})
    assert dump(wet)["ext"] == {"wet": {"level": 0.5}} and wet.signature() != plain.signature()
    assert F.canonical(plain) == canonical_bytes(doc) and plain.signature() == stable_hash(doc)


def test_dump_without_defaults_keeps_what_differs_at_every_depth() -> None:
    material = F.MaterialFacts(default=True, pbrMetallicRoughness=F.PbrMetallicRoughness(metallicFactor=0.5))
    assert dump(material, defaults=False) == {"default": True, "pbrMetallicRoughness": {"metallicFactor": 0.5}}
    assert dump(F.TextureRef(index=0), defaults=False) == {"index": 0}  # a required field stays


def test_load_checks_every_type_and_refuses_unknown_fields() -> None:
    good = dump(facts())
    assert F.load(F.DrawFacts, good) == facts()
    with pytest.raises(F.FactsError, match=r"Expected `int`, got `str` - at `\$.mesh.vertexCount`"):
        F.load(F.DrawFacts, {**good, "mesh": {**good["mesh"], "vertexCount": "3"}})
    with pytest.raises(F.FactsError, match="unknown field `bogus`"):
        F.load(F.TextureRef, {**TEXTURE, "bogus": 1})
    with pytest.raises(F.FactsError, match="missing required field `index`"):
        F.load(F.TextureRef, {"texCoord": 1})
    with pytest.raises(F.FactsError, match="Invalid enum value 'SOFT'"):
        F.load(F.MaterialFacts, {"alphaMode": "SOFT"})
