"""Reading a chunk's manifest with the pak it names while a cook may replace them (outputs/read_outputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.digest import bytes_hash
from pipeline.outputs import manifest as mf
from pipeline.outputs import read_outputs
from pipeline.outputs.pak import PakCorruptError, PakError
from pipeline.outputs.read_outputs import ATTEMPTS, load_chunk
from pipeline.outputs.write_chunk import write_chunk_outputs

CHUNK = "forest/c00"


def version(n: int) -> tuple[mf.ChunkManifest, dict[str, bytes]]:
    """The ``n``-th outputs of the chunk: one key whose fragment blob differs with ``n`` (so does the pak name)."""
    blob = b"\x03\x02\x23\x07" + f"version {n}".encode()
    digest = bytes_hash(blob)
    entry = mf.ManifestEntry(key="t/main{}", hash="k" * 64, shader="t", pass_name="main", features={},
                             stages={"fragment": digest}, draws=1)
    return mf.chunk_manifest(CHUNK, "forest", [entry]), {digest: blob}


def cook(out: Path, n: int) -> mf.ChunkManifest:
    manifest, blobs = version(n)
    write_chunk_outputs(out, manifest, blobs)
    return manifest


def test_a_chunk_reads_as_its_manifest_and_the_pak_holding_its_blobs(tmp_path) -> None:
    written = cook(tmp_path, 1)
    manifest, pak = load_chunk(tmp_path, CHUNK)
    assert manifest == mf.load_chunk_manifest(tmp_path / "forest" / "c00.json") and manifest.pak == written.pak
    assert Path(pak.name) == tmp_path / "forest" / written.pak
    assert set(pak.hashes()) == set(mf.stage_hashes(written))
    [(digest, blob)] = version(1)[1].items()
    assert pak.get(digest) == blob


def test_the_root_chunk_reads_from_its_own_file_name(tmp_path) -> None:
    manifest, blobs = version(1)
    root = mf.chunk_manifest(mf.ROOT, mf.ROOT, manifest.keys.values())
    write_chunk_outputs(tmp_path, root, blobs)
    found, pak = load_chunk(tmp_path, mf.ROOT)
    assert found.chunk == mf.ROOT and (tmp_path / ".root.json").is_file()
    assert Path(pak.name).parent == tmp_path and set(pak.hashes()) == set(blobs)


def test_a_missing_or_broken_manifest_is_a_manifest_error_at_its_path(tmp_path) -> None:
    path = tmp_path / "forest" / "c00.json"
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
    """The manifest reader as a seam: counts reads and runs ``between(count)`` after each."""

    def __init__(self, monkeypatch, between=lambda count: None):
        self.count, self.real, self.between = 0, mf.load_chunk_manifest, between
        monkeypatch.setattr(read_outputs.mf, "load_chunk_manifest", self)

    def __call__(self, path):
        found = self.real(path)
        self.count += 1
        self.between(self.count)
        return found


def test_a_pak_gone_while_its_manifest_stays_is_a_pak_error_without_retries(tmp_path, monkeypatch) -> None:
    written = cook(tmp_path, 1)
    (tmp_path / "forest" / written.pak).unlink()
    loads = CountingLoads(monkeypatch)
    with pytest.raises(PakError) as info:
        load_chunk(tmp_path, CHUNK)
    assert loads.count == 2  # read, and read again to see that no newer manifest is in place
    assert info.value.diagnostics[0].location.file == str(tmp_path / "forest" / written.pak)


def test_a_corrupt_pak_is_reported_as_corrupt(tmp_path) -> None:
    written = cook(tmp_path, 1)
    pak = tmp_path / "forest" / written.pak
    pak.write_bytes(pak.read_bytes()[:-8])
    with pytest.raises(PakCorruptError, match="truncated"):
        load_chunk(tmp_path, CHUNK)


def test_outputs_replaced_between_several_reads_give_the_newest_consistent_pair(tmp_path, monkeypatch) -> None:
    cook(tmp_path, 1)
    # a cook replaces the outputs right after each of the first three reads: the pak each read names is gone
    loads = CountingLoads(monkeypatch, lambda count: cook(tmp_path, count + 1) if count <= 3 else None)
    manifest, pak = load_chunk(tmp_path, CHUNK)
    newest = version(4)[0]
    assert manifest.pak == newest.pak and set(pak.hashes()) == set(mf.stage_hashes(newest))
    # a failed try reads twice (its manifest, then the newer one in place): reads 1-2 and 3-4 fail, read 5 holds
    assert loads.count == 5
    assert sorted(p.name for p in (tmp_path / "forest").glob("*.pak")) == [newest.pak]


def test_outputs_replaced_on_every_read_end_in_a_pak_error_after_a_bounded_number_of_reads(tmp_path,
                                                                                          monkeypatch) -> None:
    cook(tmp_path, 1)
    loads = CountingLoads(monkeypatch, lambda count: cook(tmp_path, count + 1))
    with pytest.raises(PakError):
        load_chunk(tmp_path, CHUNK)
    assert loads.count == 2 * (ATTEMPTS - 1) + 1
