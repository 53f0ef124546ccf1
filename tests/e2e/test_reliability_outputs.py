"""One bad chunk never stops the rest; stale outputs go away; incremental state is not fooled.

Odd chunk names (files at the world root, a folder ending ``.level``, a backslash, a name
near NAME_MAX), chunks deleted or renamed since the last cook, ``pipeline clean``, and
edits that keep the size and put the mtime back.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pipeline.outputs.manifest import load_chunk_manifest, load_level_manifest, stage_hashes
from pipeline.outputs.pak import FORMAT_VERSION, LIBRARY_NAME, PakReader
from pipeline.outputs.pak_write import write_pak
from robust_helpers import SAMPLE, check_readable, cook, copy_world, outputs, run_cli

TIMEOUT = 120


def chunk_names(level_manifest: Path) -> list[str]:
    return sorted(load_level_manifest(level_manifest).chunks)


def check_library_exact(out: Path) -> None:
    """The library holds exactly the blobs of the chunk indexes under ``out``, its chunk table says whose."""
    indexes = {}
    for path in sorted(out.rglob("*.json")):
        if not path.name.endswith(".level.json"):
            manifest = load_chunk_manifest(path)
            indexes[manifest.chunk] = stage_hashes(manifest)
    library = PakReader(out / LIBRARY_NAME)
    assert library.chunks == indexes
    assert set(library.hashes()) == set().union(*indexes.values())


def test_cooking_the_folder_of_a_single_model_works(tmp_path):
    model = tmp_path / "dragon"
    model.mkdir()
    for f in (SAMPLE / "forest" / "c00").iterdir():
        shutil.copy(f, model / f.name)
    proc = run_cli("cook", model, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    manifest = load_chunk_manifest(tmp_path / "out" / ".root.json")
    assert manifest.chunk == "." and manifest.keys and manifest.library == LIBRARY_NAME
    level = load_level_manifest(tmp_path / "out" / ".root.level.json")
    assert level.level == "." and level.chunks == (".",) and set(level.keys) == set(manifest.keys)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [".root.json", ".root.level.json", "shaders.chunks", LIBRARY_NAME]
    check_readable(tmp_path / "out")
    check_library_exact(tmp_path / "out")


@pytest.mark.slow
def test_odd_chunk_names_are_located_errors_and_every_other_chunk_still_cooks(tmp_path):
    world = copy_world(tmp_path / "world")
    long_name = "n" * 251  # a folder name that fits; its chunk index "<name>.json" does not (NAME_MAX 255)
    odd = {"forest/x.level": "ends in '.level'", "forest/a\\b": "invalid chunk name",
           f"forest/{long_name}": "File name too long"}
    near = "m" * 240  # near NAME_MAX, its index name still fits: cooked like any other chunk
    (world / "forest" / near).mkdir()
    shutil.copy(SAMPLE / "forest" / "c00" / "terrain.gltf", world / "forest" / near / "terrain.gltf")
    for name in odd:
        (world / name).mkdir()
        shutil.copy(SAMPLE / "forest" / "c00" / "terrain.gltf", world / name / "terrain.gltf")
    shutil.copy(SAMPLE / "forest" / "c01" / "rocks.gltf", world / "forest" / "rocks.gltf")  # chunk "forest"
    out = tmp_path / "out"
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", out, "-j", "1", "--json", timeout=TIMEOUT)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)  # the summary is still printed
    assert len(doc["errors"]) == len(odd)
    for name, message in odd.items():
        (error,) = [e for e in doc["errors"] if name in e["file"]]
        assert message in error["message"]
    again = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", out, "-j", "1", "-q", timeout=TIMEOUT)
    lines = again.stderr.splitlines()  # the same errors as one bounded line each
    assert again.returncode == 1 and len(lines) == len(odd)
    assert all(": error: " in line and len(line) < 1000 for line in lines)
    assert chunk_names(out / "forest.level.json") == ["forest", "forest/c00", "forest/c01", "forest/c02", "forest/c03",
                                                      f"forest/{near}"]
    assert load_chunk_manifest(out / "forest.json").chunk == "forest"
    assert chunk_names(out / "town.level.json") == ["town/interior", "town/market", "town/square", "town/workshop"]
    check_readable(out)
    check_library_exact(out)


# ---------------------------------------------------------------- stale outputs
def test_a_renamed_chunk_leaves_no_stale_outputs_and_the_level_equals_a_clean_cook(tmp_path):
    world = copy_world(tmp_path / "world")
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert cook(world, cache, out).errors == []
    os.rename(world / "forest" / "c02", world / "forest" / "c09")
    result = cook(world, cache, out)
    gone = {Path(p).relative_to(out).as_posix() for p in result.removed}
    assert gone == {"forest/c02.json"}  # its index: its blobs leave the library, which stays
    assert "forest/c02" not in PakReader(out / LIBRARY_NAME).chunks
    check_library_exact(out)
    clean = tmp_path / "clean-out"
    cook(world, cache, clean)
    assert outputs(out) == outputs(clean)


def test_a_level_cook_sweeps_its_level_only_and_a_chunk_cook_sweeps_nothing(tmp_path):
    world = copy_world(tmp_path / "world")
    out, cache = tmp_path / "out", tmp_path / "cache"
    cook(world, cache, out)
    shutil.rmtree(world / "forest" / "c02")
    shutil.rmtree(world / "town" / "square")
    assert cook(world, cache, out, chunk="forest/c00").removed == []
    assert (out / "forest" / "c02.json").exists()
    removed = cook(world, cache, out, level="town").removed
    assert {Path(p).name.split(".")[0] for p in removed} == {"square"}
    assert (out / "forest" / "c02.json").exists() and not (out / "town" / "square.json").exists()
    assert chunk_names(out / "town.level.json") == ["town/interior", "town/market", "town/workshop"]
    check_library_exact(out)


@pytest.mark.slow
def test_pipeline_clean_removes_what_no_cook_would_write(tmp_path):
    world = copy_world(tmp_path / "world")
    out, cache = tmp_path / "out", tmp_path / "cache"
    cook(world, cache, out)
    shutil.rmtree(world / "town")                       # a whole level gone
    shutil.rmtree(world / "forest" / "c01")             # a chunk gone
    orphan = out / "forest" / "c00.0123456789abcdef.pak"  # a per-chunk pak of output format 3
    orphan.write_bytes(write_pak({}).replace(FORMAT_VERSION.to_bytes(4, "little"), (1).to_bytes(4, "little"), 1))
    notes = out / "forest" / "notes.txt"                 # not a pipeline output: left alone
    notes.write_text("keep me")
    other = out / "forest" / "c00.pak"                    # not a pak at all: left alone
    other.write_bytes(b"old")
    proc = run_cli("clean", world, "--out", out, "--cache", cache, "--json", timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    removed = {Path(p).relative_to(out).as_posix() for p in json.loads(proc.stdout)["removed"]}
    assert "town.level.json" in removed and "forest/c01.json" in removed and "forest/c00.0123456789abcdef.pak" in removed
    assert not (out / "town.level.json").exists() and not list((out / "town").glob("*"))
    assert LIBRARY_NAME not in removed and notes.read_text() == "keep me" and other.read_bytes() == b"old"
    assert (out / "forest" / "c00.json").exists() and (out / "forest.level.json").exists()
    notes.unlink()
    other.unlink()
    check_readable(out)
    check_library_exact(out)  # settled: the blobs of the chunks removed are gone from it
    again = run_cli("clean", world, "--out", out, "--cache", cache, "--json", timeout=TIMEOUT)
    assert json.loads(again.stdout)["removed"] == []


# ---------------------------------------------------------------- trusted state
def test_the_sweep_trusts_a_manifest_it_was_told_of_only_while_its_file_signature_holds(tmp_path):
    from pipeline.outputs.sweep import file_signature, sweep_outputs

    world = copy_world(tmp_path / "world")
    out = tmp_path / "out"
    cook(world, tmp_path / "cache", out)
    path = out / "forest" / "c00.json"
    chunk_levels = {c: "forest" for c in chunk_names(out / "forest.level.json") if c != "forest/c00"}
    assert "forest/c01" in chunk_levels  # the index of forest/c00, a chunk no longer in the world, told as c01's
    told = {str(path): ("forest/c01", file_signature(path))}
    assert sweep_outputs(out / "forest", chunk_levels, "forest", told) == [] and path.exists()  # trusted
    stale = {str(path): ("forest/c01", None)}  # a stale signature: the index on disk is read, and removed
    assert sweep_outputs(out / "forest", chunk_levels, "forest", stale) == [path] and not path.exists()


def same_size_edit(path: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (same length) in place and put the mtime back."""
    st = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


@pytest.mark.slow
@pytest.mark.parametrize("verify", [False, True])
def test_a_same_size_edit_with_the_mtime_put_back_is_seen(tmp_path, verify):
    world = copy_world(tmp_path / "world")
    out, cache = tmp_path / "out", tmp_path / "cache"
    cook(world, cache, out)
    gltf = world / "forest" / "c01" / "rocks.gltf"
    same_size_edit(gltf, b'"alphaMode": "MASK"', b'"alphaMode":"BLEND"')  # other keys, same size and mtime
    result = cook(world, cache, out, verify=verify)
    clean = tmp_path / "clean"
    cook(world, tmp_path / "fresh-cache", clean)
    assert outputs(out) == outputs(clean)
    assert result.errors == []
