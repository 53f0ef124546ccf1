"""Removing the outputs no cook would write any more (outputs/sweep.py), on manifests and paks written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.digest import bytes_hash
from pipeline.outputs import manifest as mf
from pipeline.outputs.sweep import file_signature, level_files, sweep_outputs
from pipeline.outputs.write_chunk import write_chunk_outputs
from pipeline.outputs.write_level import write_level_manifest
from pipeline.stamps import stamp_of

CHUNKS = {"forest/c00": "forest", "forest/c01": "forest", "town/square": "town"}


def write_chunk(out: Path, chunk: str, level: str) -> mf.ChunkManifest:
    """A chunk manifest and its pak (one blob, its content named after the chunk)."""
    blob = b"\x03\x02\x23\x07" + chunk.encode()
    entry = mf.ManifestEntry(key="t/main{}", hash="k" * 64, shader="t", pass_name="main", features={},
                             stages={"fragment": bytes_hash(blob)}, draws=1)
    manifest = mf.chunk_manifest(chunk, level, [entry])
    write_chunk_outputs(out, manifest, {bytes_hash(blob): blob})
    return manifest


@pytest.fixture
def out(tmp_path) -> Path:
    """Outputs of three chunks of two levels, with their level manifests."""
    out = tmp_path / "out"
    written = {chunk: write_chunk(out, chunk, level) for chunk, level in CHUNKS.items()}
    for level in ("forest", "town"):
        write_level_manifest(out, mf.level_manifest(level, [m for m in written.values() if m.level == level]))
    return out


def files(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def pak_of(out: Path, chunk: str) -> Path:
    return mf.chunk_pak_path(out, mf.load_chunk_manifest(mf.chunk_manifest_path(out, chunk)))


def test_a_whole_world_sweep_removes_a_gone_chunk_with_its_pak_and_nothing_else(out) -> None:
    pak = pak_of(out, "forest/c01")
    before = files(out)
    left = {c: lv for c, lv in CHUNKS.items() if c != "forest/c01"}
    removed = sweep_outputs(out, left)
    assert sorted(removed) == sorted([out / "forest" / "c01.json", pak])
    assert files(out) == sorted(set(before) - {"forest/c01.json", f"forest/{pak.name}"})
    assert sweep_outputs(out, left) == []  # nothing left to remove


def test_a_dry_sweep_names_what_it_would_remove_and_removes_nothing(out) -> None:
    before = files(out)
    left = {c: lv for c, lv in CHUNKS.items() if c != "town/square"}
    would = sweep_outputs(out, left, dry=True)
    assert files(out) == before
    gone = {out / "town.level.json", out / "town" / "square.json", pak_of(out, "town/square")}
    assert set(would) == gone
    assert set(sweep_outputs(out, left)) == gone and not any(p.exists() for p in gone)


def test_a_dry_sweep_lists_each_file_once_as_the_sweep_removes_it(out) -> None:
    left = {c: lv for c, lv in CHUNKS.items() if c != "forest/c01"}
    would = sweep_outputs(out, left, dry=True)
    assert would == sweep_outputs(out, left)


def test_a_level_manifest_goes_only_with_its_level_and_only_in_a_whole_world_sweep(out) -> None:
    forest_only = {c: lv for c, lv in CHUNKS.items() if lv == "forest"}
    assert sweep_outputs(out, forest_only, scope="forest") == []  # another level's outputs are out of scope
    assert (out / "town.level.json").exists() and (out / "town" / "square.json").exists()
    removed = sweep_outputs(out, forest_only)
    assert {p.relative_to(out).as_posix() for p in removed} >= {"town.level.json", "town/square.json"}
    assert (out / "forest.level.json").exists()


def test_a_level_sweep_removes_its_own_gone_chunks(out) -> None:
    pak = pak_of(out, "forest/c00")
    left = {c: lv for c, lv in CHUNKS.items() if c not in ("forest/c00", "town/square")}
    assert sorted(sweep_outputs(out, left, scope="forest")) == sorted([out / "forest" / "c00.json", pak])
    assert (out / "town" / "square.json").exists()


def test_a_pak_no_manifest_names_goes_and_files_not_of_the_pipeline_stay(out) -> None:
    forest = out / "forest"
    orphan = forest / "c00.0123456789abcdef.pak"        # left by a cook killed before it removed the old pak
    stranger = forest / "c07.fedcba9876543210.pak"      # a chunk file name no manifest here uses
    first_format = forest / "c00.pak"                   # a pak of the first format beside a current manifest
    kept = {forest / "notes.txt": b"keep", forest / "other.json": b"{}", forest / "c09.pak": b"no manifest",
            forest / "odd.json": b'{"format": 3, "chunk": "gone/x"}'}
    for path in (orphan, stranger, first_format):
        path.write_bytes(b"old")
    for path, data in kept.items():
        path.write_bytes(data)
    # a level cook removes only content-addressed paks of the chunk file names its manifests use
    assert sweep_outputs(out, CHUNKS, scope="forest") == [orphan]
    assert sorted(sweep_outputs(out, CHUNKS)) == sorted([stranger, first_format])
    assert all(path.read_bytes() == data for path, data in kept.items())


def test_hidden_folders_and_a_missing_out_folder_are_left_alone(out, tmp_path) -> None:
    hidden = out / ".history" / "forest"
    write_chunk(hidden.parent, "forest/c01", "forest")
    removed = sweep_outputs(out, {})  # no chunk left: every output goes, but for the hidden folder's
    assert out / "forest" / "c01.json" in removed and not any(".history" in p.parts for p in removed)
    assert (hidden / "c01.json").exists() and files(out) == sorted(
        p.relative_to(out).as_posix() for p in hidden.iterdir())
    assert sweep_outputs(tmp_path / "nowhere", {}) == []


def test_level_files_are_the_level_json_and_every_manifest_under_its_folder(out) -> None:
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
