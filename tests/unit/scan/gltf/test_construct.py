"""Building fact models from already validated values without validating again, and their canonical bytes."""

from __future__ import annotations

import pydantic
import pytest

from pipeline import facts as F
from pipeline.digest import canonical_bytes
from pipeline.scan.gltf.construct import canonical, construct, construct_every, draw_facts

TEXTURE = {"index": 2, "texCoord": 1, "transform": True, "uv": 1}
MATERIAL = {
    "alphaMode": "MASK", "doubleSided": True, "extensions": ("KHR_materials_clearcoat",),
    "clearcoat": F.Clearcoat(clearcoatFactor=0.5, clearcoatTexture=F.TextureRef(**TEXTURE)),
    "extras": {"tag": ["a", 1, None]},
}


@pytest.mark.parametrize("cls, values", [
    (F.TextureRef, TEXTURE),
    (F.TextureRef, {"index": 0}),
    (F.MaterialFacts, MATERIAL),
    (F.ChunkFacts, {"name": "lvl/c", "level": "lvl"}),
    (F.DrawInfo, {}),
])
def test_construct_gives_what_validation_gives(cls, values) -> None:
    built, validated = construct(cls, dict(values)), cls(**values)
    assert type(built) is cls and built == validated
    assert list(built.__dict__.items()) == list(validated.__dict__.items())  # values and field order
    assert built.model_fields_set == validated.model_fields_set == set(values)
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert built.model_dump_json() == validated.model_dump_json()


def test_fields_keep_their_declared_order_whatever_order_the_values_come_in() -> None:
    backwards = dict(reversed(list(TEXTURE.items())))
    built = construct(F.TextureRef, backwards)
    assert list(built.__dict__) == list(F.TextureRef.model_fields)
    assert built.model_dump_json() == F.TextureRef(**TEXTURE).model_dump_json()


def test_default_factories_run_once_per_object() -> None:
    first, second = construct(F.MaterialFacts, {}), construct(F.MaterialFacts, {})
    assert first.extras == {} and second.extras == {}
    assert first.extras is not second.extras  # a shared default would leak one material's extras into another
    assert construct(F.MaterialFacts, {"extras": {"k": 1}}).extras == {"k": 1}


def test_draw_facts_built_from_parts_have_the_validated_signature() -> None:
    parts = {
        "mesh": F.MeshFacts(indexed=True, vertexCount=3, texcoordSets=0, normals=False, tangents=False,
                            attributes={"POSITION": F.Attribute(type="VEC3", componentType=5126)}),
        "material": construct(F.MaterialFacts, MATERIAL),
        "chunk": construct(F.ChunkFacts, {"name": "lvl/c", "level": "lvl"}),
    }
    built = construct(F.DrawFacts, parts)
    assert built.signature() == F.DrawFacts(**parts).signature()
    assert built.node == F.NodeFacts() and built.scene == F.SceneFacts()  # the class defaults


def test_unknown_and_missing_fields_are_refused() -> None:
    with pytest.raises(TypeError, match=r"^TextureRef: unknown fields \['bogus', 'other'\]$"):
        construct(F.TextureRef, {"index": 1, "other": 2, "bogus": 3})
    with pytest.raises(TypeError, match=r"^TextureRef: required fields missing$"):
        construct(F.TextureRef, {"texCoord": 1})
    with pytest.raises(TypeError, match=r"^ChunkFacts: required fields missing$"):
        construct(F.ChunkFacts, {"name": "c"})


def test_constructed_models_stay_frozen_and_hash_like_validated_ones() -> None:
    built = construct(F.TextureRef, TEXTURE)
    with pytest.raises(pydantic.ValidationError):
        built.index = 5
    assert hash(built) == hash(F.TextureRef(**TEXTURE))
    assert {built, F.TextureRef(**TEXTURE)} == {built}


@pytest.mark.parametrize("model", [
    F.TextureRef(**TEXTURE),
    F.MaterialFacts(**MATERIAL),
    F.SceneFacts(lights=F.Lights(point=2), materials=F.SceneMaterials(draws=3, alphaModes=("BLEND", "OPAQUE"))),
])
def test_canonical_bytes_equal_those_of_the_json_dump(model) -> None:
    assert canonical(model) == canonical_bytes(model.model_dump(mode="json"))


def test_canonical_bytes_sort_keys_at_every_level() -> None:
    data = canonical(F.Lights(directional=1, point=2, spot=3))
    assert data == b'{"directional":1,"point":2,"spot":3}'
    nested = canonical(F.SceneFacts())
    assert nested.index(b'"default"') < nested.index(b'"index"') < nested.index(b'"lights"') < nested.index(
        b'"materials"')


def test_canonical_refuses_values_that_are_not_json() -> None:
    odd = construct(F.ChunkFacts, {"name": {"a", "b"}, "level": "lvl"})  # no validation: a set gets in
    with pytest.raises(TypeError):
        canonical(odd)


def _same_model(built, validated) -> None:
    assert type(built) is type(validated) and built == validated
    assert list(built.__dict__.items()) == list(validated.__dict__.items())  # values and field order
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()


def test_draw_facts_gives_what_construct_gives() -> None:
    parts = {
        "mesh": F.MeshFacts(indexed=True, vertexCount=3, texcoordSets=0, normals=False, tangents=False,
                            attributes={"POSITION": F.Attribute(type="VEC3", componentType=5126)}),
        "material": construct(F.MaterialFacts, MATERIAL), "node": F.NodeFacts(skin=True),
        "scene": F.SceneFacts(index=1), "chunk": construct(F.ChunkFacts, {"name": "lvl/c", "level": "lvl"}),
        "draw": F.DrawInfo(variant="night"),
    }
    built = draw_facts(parts["mesh"], parts["material"], parts["node"], parts["scene"], parts["chunk"], parts["draw"])
    _same_model(built, construct(F.DrawFacts, parts))
    _same_model(built, F.DrawFacts(**parts))
    assert built.signature() == F.DrawFacts(**parts).signature()
    assert built.ext == {} and built.ext is not draw_facts(*parts.values()).ext  # a fresh default each time


def test_construct_every_gives_what_construct_gives_for_every_field_in_order() -> None:
    source = {"file": "a.gltf", "chunk": "lvl/c", "level": "lvl", "node": 1, "mesh": 0, "primitive": 2,
              "material": None, "variant": "night"}
    assert list(source) == list(F.DrawSource.model_fields)
    built = construct_every(F.DrawSource, dict(source))
    _same_model(built, construct(F.DrawSource, dict(source)))
    _same_model(built, F.DrawSource(**source))
    facts = F.DrawFacts(mesh=F.MeshFacts(indexed=False, vertexCount=1, texcoordSets=0, normals=False, tangents=False,
                                         attributes={}),
                        material=F.MaterialFacts(), chunk=F.ChunkFacts(name="lvl/c", level="lvl"))
    _same_model(construct_every(F.Draw, {"source": built, "facts": facts}), F.Draw(source=built, facts=facts))
