"""The structs are the one glTF schema, read two ways: msgspec's decode and the located walk.

For every corpus file and every bad-input case, the walk finds a problem exactly when
msgspec rejects JSON that parses, and a value the walk accepts converts to the structs
msgspec decodes.
"""

from __future__ import annotations

import struct
from pathlib import Path

import msgspec
import pytest

from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.container import split_container
from pipeline.scan.gltf.decode import decode_buffers, decode_document, from_python
from pipeline.scan.gltf.located import parse
from pipeline.scan.gltf.walk import problems
from robust_helpers import CASES


def _json_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:4] == b"glTF":
        return data[20:20 + struct.unpack_from("<I", data, 12)[0]]
    return data


def _agree(data: bytes, where: str) -> bool:
    """Whether both readers accept ``data``; fails when they disagree."""
    decoded, buffers = decode_document(data), decode_buffers(data)
    try:
        value = parse(data, where)
    except GltfError as error:  # not JSON: msgspec refuses it too (invalid UTF-8 is the reader's own check)
        assert "invalid UTF-8" in str(error) or (decoded is None and buffers is None), where
        return False
    found = problems(value, S.Document)
    if decoded is not None:
        assert found == [], where
        assert from_python(value) == decoded, where
        assert msgspec.convert(value, S.BufferDocument) == buffers, where
    elif not found:  # msgspec refused a NaN or Infinity literal in a property the structs ignore
        assert b"NaN" in data or b"Infinity" in data, where
        from_python(value)
    return decoded is not None


def test_corpus_both_readers_agree(corpus: Path) -> None:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".gltf", ".glb"))
    assert len(files) > 100
    accepted = sum(_agree(_json_bytes(path), str(path)) for path in files)
    assert accepted > 100


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_inputs_both_readers_agree(case, tmp_path: Path) -> None:
    case.write(tmp_path / case.filename)
    target = tmp_path / case.filename
    if not target.is_file() or target.suffix not in (".gltf", ".glb"):
        pytest.skip("not a single glTF file")
    try:
        data = split_container(target.read_bytes(), case.filename).json
    except GltfError:
        pytest.skip("the container is refused before the JSON is read")
    _agree(data, case.name)
