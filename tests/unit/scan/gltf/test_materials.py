"""glTF materials to MaterialFacts: core, extension blocks, texture slots, the shared cache."""

from __future__ import annotations

import msgspec
import pytest

from pipeline.errors import GltfError
from pipeline import facts as F
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.decode import from_python
from pipeline.scan.gltf.materials import DEFAULT_MATERIAL, MaterialCache, material_facts, texture_ref


def material(**parts) -> S.Material:
    return from_python({"asset": {"version": "2.0"}, "materials": [parts]}).materials[0]


def test_core_properties_and_defaults() -> None:
    facts = material_facts(material(alphaMode="MASK", doubleSided=True), 0, 0, "f")
    assert (facts.alphaMode, facts.doubleSided, facts.alphaCutoff, facts.default) == ("MASK", True, 0.5, False)
    assert facts.pbrMetallicRoughness == F.PbrMetallicRoughness() and facts.maxUv == -1
    assert DEFAULT_MATERIAL.default is True


def test_extension_blocks_scalars_and_names() -> None:
    facts = material_facts(material(extensions={
        "KHR_materials_clearcoat": {"clearcoatFactor": 0.5}, "KHR_materials_ior": {"ior": 1.2},
        "KHR_materials_unlit": {}, "EXT_custom": {}}), 0, 0, "f")
    assert facts.clearcoat.clearcoatFactor == 0.5 and facts.ior == 1.2 and facts.unlit is True
    assert facts.extensions == ("EXT_custom", "KHR_materials_clearcoat", "KHR_materials_ior", "KHR_materials_unlit")
    assert facts.sheen is None


def test_texture_slots_uv_sets_and_transforms() -> None:
    facts = material_facts(material(
        normalTexture={"index": 0, "scale": 0.5},
        pbrMetallicRoughness={"baseColorTexture": {"index": 1, "texCoord": 1,
                                                   "extensions": {"KHR_texture_transform": {"texCoord": 2}}}}),
        0, 2, "f")
    assert facts.normalTexture.scale == 0.5 and facts.normalTexture.uv == 0
    base = facts.pbrMetallicRoughness.baseColorTexture
    assert (base.texCoord, base.transform, base.transformTexCoord, base.uv) == (1, True, 2, 2)
    assert facts.textureTransform is True and facts.maxUv == 2


def test_texture_ref_keeps_scale_and_strength_only_for_their_slots() -> None:
    info = msgspec.convert({"index": 0, "scale": 2.0, "strength": 0.3}, S.TextureInfo)
    assert texture_ref("normalTexture", info).scale == 2.0 and texture_ref("normalTexture", info).strength is None
    assert texture_ref("occlusionTexture", info).strength == 0.3
    assert texture_ref("emissiveTexture", info).scale is None


def test_a_missing_texture_is_located() -> None:
    with pytest.raises(GltfError) as caught:
        material_facts(material(emissiveTexture={"index": 3}), 2, 3, "f")
    assert str(caught.value) == "f: /materials/2/emissiveTexture/index: error: texture 3 does not exist"


def test_the_cache_shares_equal_materials_while_their_textures_exist() -> None:
    cache = MaterialCache()
    first = cache.get(material(emissiveTexture={"index": 1}), 0, 2, "f")
    assert cache.get(material(emissiveTexture={"index": 1}), 5, 2, "g")[0] is first[0]
    with pytest.raises(GltfError, match="texture 1 does not exist"):
        cache.get(material(emissiveTexture={"index": 1}), 0, 1, "h")
