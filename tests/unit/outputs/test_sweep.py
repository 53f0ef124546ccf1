"""Removing the outputs no cook would write any more (outputs/sweep.py), on chunk indexes written here."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from library_helpers import write_library
from pipeline.digest import bytes_hash, stable_hash
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import MAGIC, LIBRARY_NAME
from pipeline.outputs.pak_write import write_pak

TABLE_NAME = "shaders.chunks"
from pipeline.outputs.sweep import file_signature, level_files, sweep_outputs
from pipeline.outputs.write_level import write_level_manifest
from pipeline.stamps import stamp_of

CHUNKS = {"forest/c00": "forest", "forest/c01": "forest", "town/square": "town"}
OLD_PAK = MAGIC + struct.pack("<III", 1, 0, 8) + bytes(44)  # the header of a per-chunk pak of output format 3


def blob_of(chunk: str) -> bytes:
    return b"\x03\x02\x23\x07" + chunk.encode()


def write_chunk(out: Path, chunk: str, level: str) -> mf.ChunkManifest:
    """A chunk index (one blob, its content named after the chunk)."""
    entry = mf.ManifestEntry(key="t/main{}", hash=stable_hash({"shader": "t", "pass": "main", "features": {}}),
                             shader="t", pass_name="main", features={},
                             stages={"fragment": bytes_hash(blob_of(chunk))}, draws=1)
    manifest = mf.chunk_manifest(chunk, level, [entry])
    path = mf.chunk_manifest_path(out, chunk)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(mf.dump_json(manifest.to_json()))
    return manifest


@pytest.fixture
def out(tmp_path) -> Path:
    """Indexes of three chunks of two levels, their library and their level manifests."""
    out = tmp_path / "out"
    written = {chunk: write_chunk(out, chunk, level) for chunk, level in CHUNKS.items()}
    write_library(mf.library_path(out), {bytes_hash(blob_of(c)): blob_of(c) for c in CHUNKS},
                  chunks={c: mf.stage_hashes(m) for c, m in written.items()})
    for level in ("forest", "town"):
        write_level_manifest(out, mf.level_manifest(level, [m for m in written.values() if m.level == level]))
    return out


def files(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def test_a_whole_world_sweep_removes_a_gone_chunks_index_and_nothing_else(out) -> None:
    before = files(out)
    library = mf.library_path(out).read_bytes()
    left = {c: lv for c, lv in CHUNKS.items() if c != "forest/c01"}
    removed = sweep_outputs(out, left)
    assert removed == [out / "forest" / "c01.json"]
    assert files(out) == sorted(set(before) - {"forest/c01.json"})
    assert mf.library_path(out).read_bytes() == library  # the library is settled by the cook, not swept
    assert sweep_outputs(out, left) == []  # nothing left to remove


def test_the_library_stays_when_no_chunk_is_left(out) -> None:
    removed = sweep_outputs(out, {})
    assert LIBRARY_NAME not in {p.name for p in removed} and mf.library_path(out).is_file()
    assert files(out) == [TABLE_NAME, LIBRARY_NAME]  # the library and its chunk table


def test_a_dry_sweep_names_what_it_would_remove_and_removes_nothing(out) -> None:
    before = files(out)
    left = {c: lv for c, lv in CHUNKS.items() if c != "town/square"}
    would = sweep_outputs(out, left, dry=True)
    assert files(out) == before
    gone = {out / "town.level.json", out / "town" / "square.json"}
    assert set(would) == gone
    assert set(sweep_outputs(out, left)) == gone and not any(p.exists() for p in gone)


def test_a_dry_sweep_lists_each_file_once_as_the_sweep_removes_it(out) -> None:
    (out / "forest" / "c01.0123456789abcdef.pak").write_bytes(OLD_PAK)
    left = {c: lv for c, lv in CHUNKS.items() if c != "forest/c01"}
    would = sweep_outputs(out, left, dry=True)
    assert len(would) == len(set(would)) == 2
    assert would == sweep_outputs(out, left)


def test_a_level_manifest_goes_only_with_its_level_and_only_in_a_whole_world_sweep(out) -> None:
    forest_only = {c: lv for c, lv in CHUNKS.items() if lv == "forest"}
    assert sweep_outputs(out, forest_only, scope="forest") == []  # another level's outputs are out of scope
    assert (out / "town.level.json").exists() and (out / "town" / "square.json").exists()
    removed = sweep_outputs(out, forest_only)
    assert {p.relative_to(out).as_posix() for p in removed} >= {"town.level.json", "town/square.json"}
    assert (out / "forest.level.json").exists()


def test_a_level_sweep_removes_its_own_gone_chunks(out) -> None:
    left = {c: lv for c, lv in CHUNKS.items() if c not in ("forest/c00", "town/square")}
    assert sweep_outputs(out, left, scope="forest") == [out / "forest" / "c00.json"]
    assert (out / "town" / "square.json").exists()


def test_old_per_chunk_paks_go_and_files_not_of_the_pipeline_stay(out) -> None:
    forest, town = out / "forest", out / "town"
    old = forest / "c00.0123456789abcdef.pak"          # format 3's pak beside the chunk's index
    first_format = forest / "c01.pak"                  # a pak of the first format beside an index
    stranger = forest / "c07.fedcba9876543210.pak"     # a chunk file name no index here uses
    other_level = town / "square.0123456789abcdef.pak"
    for path in (old, first_format, stranger, other_level):
        path.write_bytes(OLD_PAK)
    kept = {forest / "notes.txt": b"keep", forest / "other.json": b"{}", forest / "c09.pak": b"no pak magic",
            forest / "c00.1111111111111111.pak": MAGIC + struct.pack("<I", 2) + bytes(68),  # a library: version 2
            forest / "odd.json": b'{"format": 3, "chunk": "gone/x"}'}
    for path, data in kept.items():
        path.write_bytes(data)
    library = mf.library_path(out).read_bytes()
    # a level cook removes only old paks of the chunk file names its indexes use
    assert sorted(sweep_outputs(out, CHUNKS, scope="forest")) == sorted([old, first_format])
    assert sorted(sweep_outputs(out, CHUNKS)) == sorted([stranger, other_level])
    assert all(path.read_bytes() == data for path, data in kept.items())
    assert mf.library_path(out).read_bytes() == library


def test_the_library_is_never_taken_for_an_old_pak(tmp_path) -> None:
    """The library at the root of ``out`` is never taken for an old pak, even with no index left."""
    out = tmp_path / "out"
    out.mkdir()
    mf.library_path(out).write_bytes(write_pak({}))
    (out / "c00.0123456789abcdef.pak").write_bytes(OLD_PAK)
    assert sweep_outputs(out, {}) == [out / "c00.0123456789abcdef.pak"]
    assert files(out) == [LIBRARY_NAME]


def test_hidden_folders_and_a_missing_out_folder_are_left_alone(out, tmp_path) -> None:
    hidden = out / ".history" / "forest"
    write_chunk(hidden.parent, "forest/c01", "forest")
    removed = sweep_outputs(out, {})  # no chunk left: every output goes, but for the hidden folder's
    assert out / "forest" / "c01.json" in removed and not any(".history" in p.parts for p in removed)
    assert (hidden / "c01.json").exists() and files(out) == sorted(
        [LIBRARY_NAME, TABLE_NAME, *(p.relative_to(out).as_posix() for p in hidden.iterdir())])
    assert sweep_outputs(tmp_path / "nowhere", {}) == []


def test_level_files_are_the_level_json_and_every_index_under_its_folder(out) -> None:
    write_chunk(out, "forest", "forest")  # the chunk named like its level
    write_chunk(out, "forest/deep/c02", "forest")
    (out / "forester.json").write_bytes(b"{}")  # another name that starts the same: not the level's
    assert level_files(out, "forest") == sorted([out / "forest.json", out / "forest" / "c00.json",
                                                 out / "forest" / "c01.json", out / "forest" / "deep" / "c02.json"])
    assert level_files(out, "castle") == []
    assert level_files(out, mf.ROOT) == []
    write_chunk(out, mf.ROOT, mf.ROOT)
    assert level_files(out, mf.ROOT) == [out / ".root.json"]


def test_file_signature_is_the_file_stamp_or_none(out) -> None:
    path = out / "forest" / "c00.json"
    assert file_signature(path) == stamp_of(path) and file_signature(path)[1] == path.stat().st_size
    assert file_signature(out / "forest" / "gone.json") is None


def test_a_whole_world_sweep_reads_only_level_manifests_no_level_of_the_world_writes(out, monkeypatch) -> None:
    """The manifest where a level of the world writes its own is that level's: only another is read."""
    read = []
    real = mf.load_level_manifest
    monkeypatch.setattr(mf, "load_level_manifest", lambda path: read.append(Path(path).name) or real(path))
    forest_only = {c: lv for c, lv in CHUNKS.items() if lv == "forest"}
    removed = sweep_outputs(out, forest_only)
    assert set(read) == {"town.level.json"} and out / "town.level.json" in removed
    assert (out / "forest.level.json").exists()
