"""The structs: defaults, the extension objects read raw, the names of extensions."""

from __future__ import annotations

import msgspec

from pipeline.scan.gltf import structs as S


def test_glTF_defaults() -> None:
    material = msgspec.convert({}, S.Material)
    assert (material.alphaMode, material.alphaCutoff, material.emissiveFactor, material.doubleSided) == (
        "OPAQUE", 0.5, (0.0, 0.0, 0.0), False)
    assert msgspec.convert({"index": 2}, S.TextureInfo).texCoord == 0


def test_raw_extensions_name_an_extension_struct_for_a_field_read_raw() -> None:
    assert S.RAW_EXTENSIONS == {S.Material: S.MaterialExtensions, S.Primitive: S.PrimitiveExtensions}
    for cls in S.RAW_EXTENSIONS:
        fields = {f.name: f.type for f in msgspec.inspect.type_info(cls).fields}
        assert isinstance(fields["extensions"], (msgspec.inspect.UnionType, msgspec.inspect.DictType))


def test_names_lists_known_blocks_set_and_the_others_sorted() -> None:
    ext = S.MaterialExtensions(KHR_materials_unlit=S.Unlit(), others=("EXT_z", "EXT_a"))
    assert ext.names() == ("EXT_a", "EXT_z", "KHR_materials_unlit")
    assert S.MaterialExtensions().names() == ()


def test_integers_are_32_bit_indices() -> None:
    assert msgspec.convert({"version": "2.0"}, S.Asset).version == "2.0"
    try:
        msgspec.convert({"index": S.UINT32_MAX + 1}, S.TextureInfo)
    except msgspec.ValidationError as error:
        assert "<= 4294967295" in str(error)
    else:
        raise AssertionError("accepted an index over 2**32-1")
