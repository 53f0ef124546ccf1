"""JSON bytes to structs in one pass: extension blocks typed, unknown extension names kept."""

from __future__ import annotations

import json

from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.decode import decode_buffers, decode_document, from_python

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
