"""view(): an output file as one plain document."""

from __future__ import annotations

import pytest

from library_helpers import write_library
from pipeline.errors import PipelineError
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak_write import blobs_by_hash
from pipeline.outputs.view import view

VERTEX, FRAGMENT = b"\x03\x02\x23\x07vertex!!", b"\x03\x02\x23\x07fragment"


def entry(text: str, stages: dict) -> mf.ManifestEntry:
    shader, rest = text.split("/", 1)
    return mf.ManifestEntry(key=text, hash="h", shader=shader, pass_name=rest.split("{")[0],
                            features={"A": True}, stages=stages, draws=1)


def test_a_library_lists_each_blob_with_its_size_stage_and_users(tmp_path):
    blobs = blobs_by_hash([VERTEX, FRAGMENT])
    v, f = (next(d for d, b in blobs.items() if b == x) for x in (VERTEX, FRAGMENT))
    path = tmp_path / "shaders.pak"
    write_library(path, blobs, {v: {"stage": "vertex", "entry": "main"}}, {"a/c0": [v, f], "a/c1": [v]})
    doc = view(path)
    assert doc["bytes"] == path.stat().st_size
    assert doc["blob_bytes"] == len(VERTEX) + len(FRAGMENT)
    assert doc["blobs"][v] == {"bytes": len(VERTEX), "stage": "vertex", "entry": "main", "chunks": ["a/c0", "a/c1"]}
    assert doc["blobs"][f]["stage"] is None and doc["blobs"][f]["chunks"] == ["a/c0"]
    assert doc["chunks"] == {"a/c0": sorted([v, f]), "a/c1": [v]}
    table = view(tmp_path / "shaders.chunks")  # the chunk table, read with the library it names
    assert table == {"table": "shaders.chunks", "library": "shaders.pak", "chunks": doc["chunks"]}
    write_library(path, blobs)  # another library (other reflections): the table beside it is not its own
    with pytest.raises(PipelineError, match="not the chunk table of"):
        view(tmp_path / "shaders.chunks")


def test_a_chunk_index_resolves_every_position(tmp_path):
    m = mf.chunk_manifest("a/c0", "a", [entry("pbr/forward{A=1}", {"vertex": "1" * 64, "fragment": "2" * 64})])
    path = mf.chunk_manifest_path(tmp_path, "a/c0")
    path.parent.mkdir(parents=True)
    path.write_bytes(mf.dump_json(m.to_json()))
    doc = view(path)
    assert doc["keys"]["pbr/forward{A=1}"]["stages"] == {"vertex": "1" * 64, "fragment": "2" * 64}
    assert doc["library"] == "../shaders.pak" and doc["chunk"] == "a/c0"


@pytest.mark.parametrize("name, data", [("notes.json", b"{}"), ("x.bin", b"\x00\x01")])
def test_anything_else_is_a_located_error(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(PipelineError) as info:
        view(path)
    assert info.value.diagnostics[0].file == str(path)
