"""Which extensions ``extensionsRequired`` may name: what the structs read, storage, metadata."""

from __future__ import annotations

from pipeline.scan.gltf import extensions as E
from pipeline.scan.gltf import structs as S


def test_every_extension_block_the_structs_declare_is_understood() -> None:
    for block in (S.MaterialExtensions, S.PrimitiveExtensions, S.NodeExtensions, S.TextureInfoExtensions,
                  S.RootExtensions):
        for name in block.__struct_fields__:
            assert (name == "others") != E.is_understood(name), name


def test_material_extensions_are_those_of_materials_and_variants() -> None:
    assert "KHR_materials_clearcoat" in E.MATERIALS and "KHR_materials_variants" in E.MATERIALS
    assert "KHR_texture_transform" not in E.MATERIALS and "KHR_texture_transform" in E.READ


def test_storage_and_metadata_extensions_are_understood_others_are_not() -> None:
    assert E.is_understood("KHR_draco_mesh_compression") and E.is_understood("KHR_xmp_json_ld")
    assert not E.is_understood("EXT_quantum") and not E.is_understood("others")
