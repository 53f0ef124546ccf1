"""File containers: a .gltf is JSON text; a .glb is a binary container.

GLB layout (little-endian)::

    header   uint32 magic 0x46546C67 ('glTF'), uint32 version (2), uint32 total length
    chunk 0  uint32 length, uint32 type 0x4E4F534A ('JSON'), length bytes of UTF-8 JSON
    chunk 1  uint32 length, uint32 type 0x004E4942 ('BIN\\0'), length bytes (optional)
    ...      further chunks of unknown type are ignored

The kind is decided by content (the 4-byte magic), not by the file name.  Every
length is checked against the data actually present.
"""

from __future__ import annotations

import struct

import msgspec

from pipeline.errors import GltfError

GLB_MAGIC = b"glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942
_HEADER = struct.Struct("<4sII")
_CHUNK = struct.Struct("<II")
_BOM = b"\xef\xbb\xbf"


class Container(msgspec.Struct, frozen=True):
    """The JSON bytes of a glTF file and, for a GLB, its BIN chunk."""

    json: bytes
    bin: memoryview | None = None
    binary: bool = False


def split_container(data: bytes, file: str) -> Container:
    """Split file content into JSON and BIN; raises GltfError on a malformed GLB."""
    if data[:4] == GLB_MAGIC:
        return _split_glb(data, file)
    if file.lower().endswith(".glb"):
        raise GltfError.at(file, "not a GLB file: missing 'glTF' magic")
    return Container(data[3:] if data.startswith(_BOM) else data)


def _split_glb(data: bytes, file: str) -> Container:
    if len(data) < _HEADER.size + _CHUNK.size:
        raise GltfError.at(file, f"GLB: truncated header ({len(data)} bytes)")
    _, version, length = _HEADER.unpack_from(data)
    if version != 2:
        raise GltfError.at(file, f"GLB: unsupported container version {version}")
    if length != len(data):
        raise GltfError.at(file, f"GLB: header says {length} bytes, file has {len(data)}")
    chunks = list(_chunks(data, file))
    if chunks[0][0] != CHUNK_JSON:
        raise GltfError.at(file, f"GLB: first chunk has type 0x{chunks[0][0]:08X}, expected JSON")
    view = memoryview(data)
    json_start, json_end = chunks[0][1]
    binary = next(((s, e) for kind, (s, e) in chunks[1:2] if kind == CHUNK_BIN), None)
    return Container(bytes(view[json_start:json_end]), view[binary[0]:binary[1]] if binary else None, True)


def _chunks(data: bytes, file: str):
    """Yield (type, (start, end)) of every chunk after the header."""
    offset = _HEADER.size
    while offset < len(data):
        if offset + _CHUNK.size > len(data):
            raise GltfError.at(file, f"GLB: truncated chunk header at byte {offset}")
        length, kind = _CHUNK.unpack_from(data, offset)
        start = offset + _CHUNK.size
        if start + length > len(data):
            raise GltfError.at(file, f"GLB: chunk at byte {offset} claims {length} bytes, only {len(data) - start} left")
        yield kind, (start, start + length)
        offset = start + length + (-length % 4)
