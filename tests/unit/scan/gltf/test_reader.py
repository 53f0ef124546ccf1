"""Reading one file: container, decode (or the located error), version, required extensions, checks."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.reader import Gltf, parse_gltf, read_bytes, read_gltf

TRIANGLE = {
    "asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
    "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "bufferView": 0, "max": [1, 1, 0]}],
    "bufferViews": [{"buffer": 0, "byteLength": 36}], "buffers": [{"byteLength": 36}],
}


def parse(doc: dict | bytes, name: str = "f.gltf") -> Gltf:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return parse_gltf(data, Path(name), name, Limits())


def error(doc: dict | bytes) -> str:
    with pytest.raises(GltfError) as caught:
        parse(doc)
    [diagnostic] = caught.value.diagnostics
    return str(diagnostic)


def glb(doc: dict) -> bytes:
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    body = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", 36, 0x004E4942) + bytes(36)
    return b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body


def test_a_valid_file_and_its_buffer_details() -> None:
    gltf = parse(TRIANGLE)
    assert isinstance(gltf.doc, S.Document) and gltf.doc.meshes[0]["primitives"][0]["attributes"] == {"POSITION": 0}
    assert gltf.data().accessors[0]["max"] == [1, 1, 0]
    assert parse(glb(TRIANGLE), "f.glb").container.bin == bytes(36)


def test_bad_values_are_located() -> None:
    assert error(TRIANGLE | {"scene": 1.0}) == "f.gltf: /scene: error: input should be a valid integer"
    assert error(b"{") == "f.gltf:1:1: error: invalid JSON: EOF while parsing an object"


def test_an_extensions_field_of_the_wrong_type_is_located_not_a_crash() -> None:
    bad = TRIANGLE | {"nodes": [{"mesh": 0, "extensions": {"others": 5}}]}
    assert error(bad) == "f.gltf: /nodes/0/extensions/others: error: input should be a valid array"


def test_buffer_details_the_structs_reject_are_located_when_read() -> None:
    gltf = parse(TRIANGLE | {"bufferViews": [{"buffer": 0, "byteLength": 36, "byteStride": 1}]})
    with pytest.raises(GltfError) as caught:
        gltf.data()
    assert str(caught.value) == "f.gltf: /bufferViews/0/byteStride: error: input should be greater than or equal to 4"


def test_a_nan_literal_where_nothing_is_read_is_accepted() -> None:
    text = json.dumps(TRIANGLE | {"extras": {"x": 0}}).replace('"x": 0', '"x": NaN').encode()
    assert parse(text).doc.scenes == [S.Scene(nodes=[0])]
    assert parse(text).data().bufferViews[0]["byteLength"] == 36


def test_version_and_required_extensions() -> None:
    assert error(TRIANGLE | {"asset": {"version": "1.0"}}) == (
        "f.gltf: /asset/version: error: unsupported glTF version '1.0' (expected 2.x)")
    assert error(TRIANGLE | {"asset": {"version": "2.0", "minVersion": "3.0"}}) == (
        "f.gltf: /asset/minVersion: error: unsupported glTF minVersion '3.0' (expected 2.x)")
    assert error(TRIANGLE | {"extensionsRequired": ["KHR_materials_ior", "EXT_quantum"]}) == (
        "f.gltf: /extensionsRequired/1: error: required extension 'EXT_quantum' is not supported")


def test_checks_run_after_decoding() -> None:
    assert error(TRIANGLE | {"nodes": [{"mesh": 3}]}) == "f.gltf: /nodes/0/mesh: error: mesh 3 does not exist"
    assert error(TRIANGLE | {"materials": [{"extras": {"n": 2**70}}]}) == (
        "f.gltf: /materials/0/extras/n: error: integer does not fit in 64 bits")


def test_reading_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "f.gltf"
    path.write_text(json.dumps(TRIANGLE))
    assert read_gltf(path, "f.gltf", Limits()).doc == parse(TRIANGLE).doc
    with pytest.raises(GltfError, match="over the limit of 10"):
        read_bytes(path, "f.gltf", Limits(max_file_bytes=10))
