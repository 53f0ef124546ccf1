"""JSON bytes to structs in one pass: extension blocks typed, unknown extension names kept."""

from __future__ import annotations

import json
import typing

import msgspec

from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.decode import _extensions, decode_buffers, decode_document, from_python

DOC = {
    "asset": {"version": "2.0"},
    "materials": [{"extensions": {"KHR_materials_ior": {"ior": 1.4}, "EXT_custom": {"a": 1}}}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "extensions": {
        "KHR_materials_variants": {"mappings": [{"material": 0, "variants": [0]}]}, "EXT_other": {}}}]}],
    "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "bufferView": 0, "min": [0, 0, 0]}],
    "bufferViews": [{"buffer": 0, "byteLength": 36}],
    "buffers": [{"byteLength": 36}],
}


def test_extension_blocks_become_structs_and_unknown_names_are_kept() -> None:
    doc = decode_document(json.dumps(DOC).encode())
    ext = doc.materials[0].extensions
    assert isinstance(ext, S.MaterialExtensions) and ext.KHR_materials_ior == S.Ior(ior=1.4)
    assert ext.names() == ("EXT_custom", "KHR_materials_ior")
    prim_ext = doc.meshes[0]["primitives"][0]["extensions"]
    assert isinstance(prim_ext, S.PrimitiveExtensions) and prim_ext.others == ("EXT_other",)
    assert prim_ext.KHR_materials_variants.mappings[0].variants == [0]


def test_what_the_structs_reject_is_none() -> None:
    assert decode_document(b'{"asset": {"version": 2}}') is None
    assert decode_document(b"{") is None
    assert decode_buffers(b'{"buffers": [{"byteLength": 0}]}') is None


def test_buffer_locations_are_their_own_pass() -> None:
    data = decode_buffers(json.dumps(DOC).encode())
    assert data.accessors[0]["min"] == [0, 0, 0] and data.bufferViews[0]["byteLength"] == 36


def test_from_python_gives_the_same_structs() -> None:
    assert from_python(json.loads(json.dumps(DOC))) == decode_document(json.dumps(DOC).encode())


def _material_ext(blocks: str) -> S.MaterialExtensions:
    text = '{"asset": {"version": "2.0"}, "materials": [{"extensions": %s}]}' % blocks
    return decode_document(text.encode()).materials[0].extensions


def test_equal_material_extension_blocks_are_converted_once_and_told_apart_exactly() -> None:
    block = '{"KHR_materials_ior": {"ior": 1.5}, "EXT_custom": {"a": 1}}'
    first, again = _material_ext(block), _material_ext(block)
    assert first is again and first == _extensions(json.loads(block), S.MaterialExtensions)
    reordered = _material_ext('{"EXT_custom": {"a": 1}, "KHR_materials_ior": {"ior": 1.5}}')
    assert reordered is not first and reordered == first  # its own entry, the same struct
    negative = _material_ext('{"KHR_materials_ior": {"ior": -0.0}}')
    zero = _material_ext('{"KHR_materials_ior": {"ior": 0.0}}')
    assert str(negative.KHR_materials_ior.ior) == "-0.0" and str(zero.KHR_materials_ior.ior) == "0.0"
    huge = '{"EXT_custom": {"a": %d}}' % 2**70  # no JSON key for it: converted every time
    assert _material_ext(huge) == _extensions(json.loads(huge), S.MaterialExtensions)
    assert _material_ext(huge).others == ("EXT_custom",)


def _holds_mutable(annotation) -> bool:
    """Whether a type can hold a list or dict (the cached material extension structs must not)."""
    origin = typing.get_origin(annotation)
    if annotation in (list, dict) or origin in (list, dict):
        return True
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return any(_holds_mutable(t) for t in typing.get_type_hints(annotation, include_extras=False).values())
    return any(_holds_mutable(a) for a in typing.get_args(annotation) if not isinstance(a, msgspec.Meta))


def test_material_extension_structs_hold_nothing_mutable() -> None:
    assert not _holds_mutable(S.MaterialExtensions)
    assert _holds_mutable(S.PrimitiveExtensions)  # the check sees lists: primitives are not shared
