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
from robust_helpers import SAMPLE, check_readable, cook, copy_world, outputs, run_cli

TIMEOUT = 120


def chunk_names(level_manifest: Path) -> list[str]:
    return sorted(json.loads(level_manifest.read_bytes())["chunks"])


def test_cooking_the_folder_of_a_single_model_works(tmp_path):
    model = tmp_path / "dragon"
    model.mkdir()
    for f in (SAMPLE / "forest" / "c00").iterdir():
        shutil.copy(f, model / f.name)
    proc = run_cli("cook", model, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / ".root.json").read_bytes())
    assert manifest["chunk"] == "." and manifest["keys"]
    level = json.loads((tmp_path / "out" / ".root.level.json").read_bytes())
    assert level["chunks"] == {".": {"manifest": ".root.json", "pak": manifest["pak"]}}
    check_readable(tmp_path / "out")


@pytest.mark.slow
def test_odd_chunk_names_are_located_errors_and_every_other_chunk_still_cooks(tmp_path):
    world = copy_world(tmp_path / "world")
    long_name = "n" * 240
    odd = {"forest/x.level": "ends in '.level'", "forest/a\\b": "invalid chunk name",
           f"forest/{long_name}": "File name too long"}
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
    assert chunk_names(out / "forest.level.json") == ["forest", "forest/c00", "forest/c01", "forest/c02", "forest/c03"]
    assert json.loads((out / "forest.level.json").read_bytes())["chunks"]["forest"] == {
        "manifest": "forest.json", "pak": json.loads((out / "forest.json").read_bytes())["pak"]}
    assert chunk_names(out / "town.level.json") == ["town/interior", "town/market", "town/square", "town/workshop"]
    check_readable(out)


# ---------------------------------------------------------------- stale outputs
def test_a_renamed_chunk_leaves_no_stale_outputs_and_the_level_equals_a_clean_cook(tmp_path):
    world = copy_world(tmp_path / "world")
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert cook(world, cache, out).errors == []
    os.rename(world / "forest" / "c02", world / "forest" / "c09")
    result = cook(world, cache, out)
    gone = {Path(p).relative_to(out).as_posix() for p in result.removed}
    assert {p.split(".")[0] for p in gone} == {"forest/c02"} and len(gone) == 2  # its .json and its pak
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


@pytest.mark.slow
def test_pipeline_clean_removes_what_no_cook_would_write(tmp_path):
    world = copy_world(tmp_path / "world")
    out, cache = tmp_path / "out", tmp_path / "cache"
    cook(world, cache, out)
    shutil.rmtree(world / "town")                       # a whole level gone
    shutil.rmtree(world / "forest" / "c01")             # a chunk gone
    orphan = out / "forest" / "c00.0123456789abcdef.pak"  # a pak no manifest names (a killed cook's)
    orphan.write_bytes(b"old")
    notes = out / "forest" / "notes.txt"                 # not a pipeline output: left alone
    notes.write_text("keep me")
    proc = run_cli("clean", world, "--out", out, "--cache", cache, "--json", timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    removed = {Path(p).relative_to(out).as_posix() for p in json.loads(proc.stdout)["removed"]}
    assert "town.level.json" in removed and "forest/c01.json" in removed and "forest/c00.0123456789abcdef.pak" in removed
    assert not (out / "town.level.json").exists() and not list((out / "town").glob("*"))
    assert notes.read_text() == "keep me"
    assert (out / "forest" / "c00.json").exists() and (out / "forest.level.json").exists()
    notes.unlink()
    check_readable(out)
    again = run_cli("clean", world, "--out", out, "--cache", cache, "--json", timeout=TIMEOUT)
    assert json.loads(again.stdout)["removed"] == []


# ---------------------------------------------------------------- trusted state
def test_the_sweep_trusts_a_manifest_it_was_told_of_only_while_its_file_signature_holds(tmp_path):
    from pipeline.outputs.sweep import file_signature, sweep_outputs

    world = copy_world(tmp_path / "world")
    out = tmp_path / "out"
    cook(world, tmp_path / "cache", out)
    path = out / "forest" / "c00.json"
    pak = json.loads(path.read_bytes())["pak"]
    chunk_levels = {c: "forest" for c in chunk_names(out / "forest.level.json")}
    assert "forest/c00" in chunk_levels
    told = {str(path): ("forest/c00", "c00.0000000000000000.pak", file_signature(path))}
    assert sweep_outputs(out / "forest", chunk_levels, "forest", {str(path): (*told[str(path)][:2], None)}) == []
    assert (path.parent / pak).exists()  # a stale signature: the manifest on disk was read, its pak kept
    assert sweep_outputs(out / "forest", chunk_levels, "forest", told) == [path.parent / pak]


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
