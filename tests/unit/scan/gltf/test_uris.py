"""Buffer URIs: data URIs and relative file paths inside the world."""

from __future__ import annotations

import base64

import msgspec
import pytest

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.uris import check_buffer_uris

LIMITS = Limits(max_data_uri_bytes=200)


def check(uri: str | None, byte_length: int = 4, file: str = "c/f.gltf") -> None:
    buffer = {"byteLength": byte_length} | ({"uri": uri} if uri is not None else {})
    check_buffer_uris(msgspec.convert({"asset": {"version": "2.0"}, "buffers": [buffer]}, S.Document), LIMITS, file)


def message(uri: str, byte_length: int = 4, file: str = "c/f.gltf") -> str:
    with pytest.raises(GltfError) as caught:
        check(uri, byte_length, file)
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.location.pointer == "/buffers/0/uri"
    return diagnostic.message


def test_accepted_uris() -> None:
    check(None)
    check("data:application/octet-stream;base64," + base64.b64encode(bytes(4)).decode())
    check("bin/mesh%20one.bin")
    check("../sibling/f.bin")  # from c/: still inside the world


def test_data_uris() -> None:
    assert message("data:;base64," + base64.b64encode(bytes(2)).decode()) == (
        "data URI holds 2 bytes, fewer than the buffer's byteLength 4")
    assert message("data:text/plain,abcd") == "data URI is not base64-encoded (expected 'data:<type>;base64,...')"
    assert message("data:;base64,@@@@") == "data URI is not valid base64"
    assert message("data:;base64," + "A" * 300).startswith("data URI of 313 bytes, over the limit of 200")


def test_file_uris_that_leave_the_world_or_are_not_relative() -> None:
    assert message("../../etc/passwd") == "buffer URI '../../etc/passwd' points outside the world root"
    assert message("%2E%2E/%2E%2E/x.bin") == "buffer URI '%2E%2E/%2E%2E/x.bin' points outside the world root"
    assert message("/etc/passwd") == "buffer URI '/etc/passwd' is not a relative file path"
    assert message("https://example.com/x.bin") == "buffer URI 'https://example.com/x.bin' is not a relative file path"
    assert message("C:x.bin") == "buffer URI 'C:x.bin' is not a relative file path"
    assert message("a%0Ab.bin") == "buffer URI contains control characters"
