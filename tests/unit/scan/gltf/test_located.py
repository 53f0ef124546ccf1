"""Located errors for what the structs reject: JSON syntax, UTF-8, and the first bad value."""

from __future__ import annotations

import pytest

from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.located import locate, parse, utf8_error


def error_of(json_bytes: bytes, hint=S.Document) -> str:
    with pytest.raises(GltfError) as caught:
        locate(hint, json_bytes, "f.gltf")
    [diagnostic] = caught.value.diagnostics
    return str(diagnostic)


def test_the_first_bad_value_with_how_many_more() -> None:
    assert error_of(b'{"asset": {"version": "2.0"}, "materials": [{"alphaMode": "X"}]}') == (
        "f.gltf: /materials/0/alphaMode: error: input should be 'OPAQUE', 'MASK' or 'BLEND'")
    assert error_of(b'{"asset": {}, "scene": -1, "nodes": [{"mesh": 1.0}]}') == (
        "f.gltf: /asset/version: error: required property is missing (and 2 more)")


def test_keys_with_slash_and_tilde_are_escaped_in_the_pointer() -> None:
    text = b'{"asset": {"version": "2.0"}, "meshes": [{"primitives": [{"attributes": {"a/b~c": "0"}}]}]}'
    assert error_of(text) == "f.gltf: /meshes/0/primitives/0/attributes/a~1b~0c: error: input should be a valid integer"


def test_a_top_level_value_that_is_not_an_object() -> None:
    assert error_of(b"[]") == "f.gltf: /: error: input should be an object"


def test_json_syntax_errors_are_located_at_line_and_column() -> None:
    assert error_of(b'{\n "asset": {"version": "2.0"},\n}') == "f.gltf:3:1: error: invalid JSON: trailing comma"
    assert error_of(b"") == "f.gltf:1:1: error: invalid JSON: EOF while parsing a value"
    assert error_of(b"[" * 300 + b"]" * 300).endswith("error: invalid JSON: recursion limit exceeded")


def test_invalid_utf8_is_located_at_its_first_byte() -> None:
    assert error_of(b'{"asset":\n {"version": "2.0\xff"}}') == (
        "f.gltf:2:18: error: invalid JSON: invalid UTF-8 (byte 0xFF)")
    assert utf8_error("é".encode(), "f") is None


def test_what_the_structs_accept_comes_back_parsed() -> None:
    assert locate(S.Document, b'{"asset": {"version": "2.0"}, "scene": 0, "x": NaN}', "f") == {
        "asset": {"version": "2.0"}, "scene": 0, "x": pytest.approx(float("nan"), nan_ok=True)}
    assert parse(b'{"n": 1180591620717411303424}', "f") == {"n": 2**70}


def test_the_buffer_document_is_located_too() -> None:
    assert error_of(b'{"bufferViews": [{"buffer": 0}]}', S.BufferDocument) == (
        "f.gltf: /bufferViews/0/byteLength: error: required property is missing")
