"""File containers: a .gltf's JSON text, or a .glb's JSON and BIN chunks, checked against the bytes present."""

from __future__ import annotations

import struct

import pytest

from pipeline.errors import GltfError
from pipeline.scan.gltf.container import CHUNK_BIN, CHUNK_JSON, GLB_MAGIC, Container, split_container

TEXT = b'{"asset": {"version": "2.0"}}'


def chunk(kind: int, data: bytes, pad: bytes = b" ") -> bytes:
    return struct.pack("<II", len(data) + (-len(data) % 4), kind) + data + pad * (-len(data) % 4)


def glb(*chunks: bytes, version: int = 2) -> bytes:
    body = b"".join(chunks)
    return GLB_MAGIC + struct.pack("<II", version, 12 + len(body)) + body


def error(data: bytes, file: str = "m.glb") -> str:
    with pytest.raises(GltfError) as caught:
        split_container(data, file)
    [diagnostic] = caught.value.diagnostics
    return str(diagnostic)


def test_json_text_is_the_whole_file_without_its_byte_order_mark() -> None:
    assert split_container(TEXT, "a.gltf") == Container(TEXT, None, False)
    assert split_container(b"\xef\xbb\xbf" + TEXT, "a.gltf").json == TEXT
    assert split_container(b" \xef\xbb\xbf" + TEXT, "a.gltf").json == b" \xef\xbb\xbf" + TEXT  # only a leading mark


def test_a_glb_gives_its_json_chunk_padding_included_and_its_bin_chunk() -> None:
    payload = bytes(range(1, 7))  # 6 bytes: the chunk is padded with zeros to 8
    container = split_container(glb(chunk(CHUNK_JSON, TEXT[:-1]), chunk(CHUNK_BIN, payload, b"\0")), "m.glb")
    assert container.binary is True
    assert container.json == TEXT[:-1] + b" " * (-len(TEXT[:-1]) % 4)
    assert bytes(container.bin) == payload + b"\0\0"


def test_the_kind_is_decided_by_content_not_by_name() -> None:
    data = glb(chunk(CHUNK_JSON, TEXT))
    assert split_container(data, "named.gltf").binary is True
    assert split_container(data, "named.gltf").json.rstrip() == TEXT
    assert error(TEXT, "dir/m.GLB") == "dir/m.GLB: error: not a GLB file: missing 'glTF' magic"
    assert error(TEXT, "m.glb") == "m.glb: error: not a GLB file: missing 'glTF' magic"


def test_only_a_bin_chunk_right_after_the_json_is_the_binary_data() -> None:
    unknown = 0x12345678
    extra = chunk(unknown, b"ignored!")
    after_bin = split_container(glb(chunk(CHUNK_JSON, TEXT), chunk(CHUNK_BIN, b"data"), extra), "m.glb")
    assert bytes(after_bin.bin) == b"data" and after_bin.json.rstrip() == TEXT
    before_bin = split_container(glb(chunk(CHUNK_JSON, TEXT), extra, chunk(CHUNK_BIN, b"data")), "m.glb")
    assert before_bin.bin is None
    json_only = split_container(glb(chunk(CHUNK_JSON, TEXT)), "m.glb")
    assert json_only.bin is None and json_only.binary is True


def test_unpadded_chunk_lengths_skip_to_the_next_four_byte_boundary() -> None:
    three = struct.pack("<II", 3, CHUNK_JSON) + b"{}\n" + b"\0"  # length 3, one byte of padding
    container = split_container(glb(three, chunk(CHUNK_BIN, b"abcd")), "m.glb")
    assert container.json == b"{}\n"
    assert bytes(container.bin) == b"abcd"


def test_the_bin_chunk_is_a_view_of_the_file_not_a_copy() -> None:
    data = glb(chunk(CHUNK_JSON, TEXT), chunk(CHUNK_BIN, b"\x01\x02\x03\x04"))
    container = split_container(data, "m.glb")
    assert isinstance(container.bin, memoryview) and container.bin.obj is data
    assert isinstance(container.json, bytes)


def test_the_smallest_glb_is_a_header_and_one_empty_chunk() -> None:
    smallest = glb(struct.pack("<II", 0, CHUNK_JSON))
    assert len(smallest) == 20 and split_container(smallest, "m.glb") == Container(b"", None, True)
    short = smallest[:19]
    assert error(short) == "m.glb: error: GLB: truncated header (19 bytes)"


def test_chunk_problems_name_the_byte_where_they_are() -> None:
    json_chunk = chunk(CHUNK_JSON, TEXT)
    bin_at = 12 + len(json_chunk)
    overrun = glb(json_chunk, struct.pack("<II", 100, CHUNK_BIN) + bytes(8))
    assert error(overrun) == f"m.glb: error: GLB: chunk at byte {bin_at} claims 100 bytes, only 8 left"
    torn = glb(json_chunk, b"\0\0\0")
    assert error(torn) == f"m.glb: error: GLB: truncated chunk header at byte {bin_at}"
    first_bin = glb(chunk(CHUNK_BIN, b"data"), json_chunk)
    assert error(first_bin) == "m.glb: error: GLB: first chunk has type 0x004E4942, expected JSON"


def test_header_length_must_match_the_file_exactly() -> None:
    data = glb(chunk(CHUNK_JSON, TEXT))
    assert error(data + bytes(4)) == f"m.glb: error: GLB: header says {len(data)} bytes, file has {len(data) + 4}"
