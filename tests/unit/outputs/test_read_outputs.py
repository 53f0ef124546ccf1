"""Reading a chunk's index with the shader library while a cook may replace them (outputs/read_outputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from library_helpers import write_library
from pipeline.digest import bytes_hash, stable_hash
from pipeline.outputs import atomic
from pipeline.outputs import manifest as mf
from pipeline.outputs import read_outputs
from pipeline.outputs.pak import PakCorruptError, PakError, PakReader, read_index
from pipeline.outputs.pak_write import write_pak
from pipeline.outputs.read_outputs import ATTEMPTS, load_chunk
from pipeline.structs import replace

CHUNK = "forest/c00"
TEXT = b"#version 300 es\nvoid main() {}\n"  # a GLSL ES text blob: the library keeps no reflection for it


def version(n: int) -> tuple[mf.ChunkManifest, dict[str, bytes]]:
    """The ``n``-th outputs of the chunk: one key whose fragment blob differs with ``n``, and a text blob."""
    blob = b"\x03\x02\x23\x07" + f"version {n}".encode()
    entry = mf.ManifestEntry(key="t/main{}", hash=stable_hash({"shader": "t", "pass": "main", "features": {}}),
                             shader="t", pass_name="main", features={},
                             stages={"fragment": bytes_hash(blob), "vertex": bytes_hash(TEXT)}, draws=1)
    return mf.chunk_manifest(CHUNK, "forest", [entry]), {bytes_hash(blob): blob, bytes_hash(TEXT): TEXT}


def reflection_of(blobs: dict[str, bytes]) -> dict[str, dict | None]:
    return {d: None if b == TEXT else {"stage": "fragment", "of": b.decode("latin-1")} for d, b in blobs.items()}


def cook(out: Path, n: int, chunk_of=lambda m: m) -> mf.ChunkManifest:
    """Write version ``n`` as a cook does: the library grown by its blobs, the index renamed in, the library
    settled to the index's blobs."""
    manifest, blobs = version(n)
    manifest = chunk_of(manifest)
    path = mf.library_path(out)
    held = {d: PakReader(path).get(d) for d in read_index(path)[0]} if read_index(path) else {}
    grown = {**held, **blobs}
    atomic.write_atomic(path, write_pak(grown, reflection_of(grown)))
    atomic.write_atomic(mf.chunk_manifest_path(out, manifest.chunk), mf.dump_json(manifest.to_json()))
    write_library(path, blobs, reflection_of(blobs), {manifest.chunk: set(blobs)})
    return manifest


def test_a_chunk_reads_as_its_index_with_reflection_and_the_library_holding_its_blobs(tmp_path) -> None:
    written = cook(tmp_path, 1)
    manifest, library = load_chunk(tmp_path, CHUNK)
    assert manifest.reflection == {d: doc for d, doc in reflection_of(version(1)[1]).items() if doc is not None}
    assert replace(manifest, reflection={}) == mf.load_chunk_manifest(tmp_path / "forest" / "c00.json") == written
    assert Path(library.name) == tmp_path / "shaders.pak"
    assert set(library.hashes()) == set(mf.stage_hashes(written))
    for digest, blob in version(1)[1].items():
        assert library.get(digest) == blob


def test_the_root_chunk_reads_from_its_own_file_name(tmp_path) -> None:
    cook(tmp_path, 1, lambda m: mf.chunk_manifest(mf.ROOT, mf.ROOT, m.keys.values()))
    found, library = load_chunk(tmp_path, mf.ROOT)
    assert found.chunk == mf.ROOT and (tmp_path / ".root.json").is_file()
    assert Path(library.name).parent == tmp_path and set(library.hashes()) == set(version(1)[1])


def test_a_missing_or_broken_index_is_a_manifest_error_at_its_path(tmp_path) -> None:
    path = tmp_path / "forest" / "c00.json"
    cook(tmp_path, 1)
    path.unlink()
    with pytest.raises(mf.ManifestError) as info:
        load_chunk(tmp_path, CHUNK)
    assert info.value.diagnostics[0].location.file == str(path)
    cook(tmp_path, 1)
    path.write_text("{not json")
    with pytest.raises(mf.ManifestError, match="not valid JSON") as info:
        load_chunk(tmp_path, CHUNK)
    assert info.value.diagnostics[0].location.file == str(path)


def test_an_invalid_chunk_name_is_refused_before_any_read(tmp_path) -> None:
    with pytest.raises(mf.ManifestError, match="invalid chunk name"):
        load_chunk(tmp_path, "../elsewhere")


class CountingLoads:
    """The index reader as a seam: counts reads and runs ``before(count)`` before each, i.e. after the
    library was opened and before the index is read."""

    def __init__(self, monkeypatch, before=lambda count: None):
        self.count, self.real, self.before = 0, mf.load_chunk_manifest, before
        monkeypatch.setattr(read_outputs.mf, "load_chunk_manifest", self)

    def __call__(self, path):
        self.count += 1
        self.before(self.count)
        return self.real(path)


def test_a_missing_library_is_a_pak_error_at_its_path_without_reading_the_index(tmp_path, monkeypatch) -> None:
    cook(tmp_path, 1)
    (tmp_path / "shaders.pak").unlink()
    loads = CountingLoads(monkeypatch)
    with pytest.raises(PakError) as info:
        load_chunk(tmp_path, CHUNK)
    assert loads.count == 0  # the library is opened first
    assert info.value.diagnostics[0].location.file == str(tmp_path / "shaders.pak")


def test_a_library_lacking_a_blob_of_its_index_while_both_stay_is_a_pak_error_after_bounded_reads(
        tmp_path, monkeypatch) -> None:
    cook(tmp_path, 1)
    atomic.write_atomic(tmp_path / "shaders.pak", write_pak({bytes_hash(TEXT): TEXT}))
    loads = CountingLoads(monkeypatch)
    with pytest.raises(PakCorruptError, match="lacks blob") as info:
        load_chunk(tmp_path, CHUNK)
    assert loads.count == ATTEMPTS
    assert info.value.diagnostics[0].location.file == str(tmp_path / "shaders.pak")


def test_a_corrupt_library_is_reported_as_corrupt(tmp_path) -> None:
    cook(tmp_path, 1)
    library = tmp_path / "shaders.pak"
    library.write_bytes(library.read_bytes()[:-8])
    with pytest.raises(PakCorruptError, match="truncated"):
        load_chunk(tmp_path, CHUNK)


def test_outputs_replaced_between_several_reads_give_the_newest_consistent_pair(tmp_path, monkeypatch) -> None:
    cook(tmp_path, 1)
    # a cook replaces the outputs between the library's opening and the index's read, three times: each time
    # the index names a blob the library opened lacks
    loads = CountingLoads(monkeypatch, lambda count: cook(tmp_path, count + 1) if count <= 3 else None)
    manifest, library = load_chunk(tmp_path, CHUNK)
    newest = version(4)[0]
    assert manifest.keys == newest.keys and set(library.hashes()) == set(mf.stage_hashes(newest))
    assert loads.count == 4  # tries 1-3 fail, try 4 holds


def test_outputs_replaced_on_every_read_end_in_a_pak_error_after_a_bounded_number_of_reads(tmp_path,
                                                                                          monkeypatch) -> None:
    cook(tmp_path, 1)
    loads = CountingLoads(monkeypatch, lambda count: cook(tmp_path, count + 1))
    with pytest.raises(PakError, match="lacks blob"):
        load_chunk(tmp_path, CHUNK)
    assert loads.count == ATTEMPTS
