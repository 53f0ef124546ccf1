"""``pipeline clean``: the outputs of chunks a world no longer has go; everything else stays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from robust_helpers import make_world, outputs

from pipeline import api
from pipeline.cli.clean import command
from pipeline.outputs.manifest import load_chunk_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, PakReader


def run(*args: object):
    return CliRunner().invoke(command, [str(a) for a in args])


def test_a_deleted_chunk_s_outputs_are_removed_and_named(tmp_path: Path, monkeypatch) -> None:
    world, cache, out = tmp_path / "w", tmp_path / "cache", tmp_path / "out"
    make_world(world)
    assert api.cook(world, cache=cache, out=out, jobs=1).ok
    before = outputs(out)
    (out / "notes.txt").write_text("not an output")
    shutil.rmtree(world / "town")
    gone = sorted(name for name in before if name.startswith(("town/", "town.")))
    assert len(gone) == 2  # the chunk's index, the level's manifest
    monkeypatch.chdir(tmp_path)
    result = run("w", "--out", "out", "--cache", "cache")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted(f"removed out/{name}" for name in gone)
    assert lines[-1] == f"removed {len(gone)} files no cook of w would write"
    after = outputs(out)
    library_files = {LIBRARY_NAME, "shaders.chunks"}  # settled below
    kept = {name: data for name, data in before.items() if name not in gone and name not in library_files}
    assert {n: d for n, d in after.items() if n not in library_files} == kept | {"notes.txt": b"not an output"}
    library = PakReader(out / LIBRARY_NAME)  # settled: the removed chunk's blobs and table entry gone with it
    indexes = [load_chunk_manifest(out / name) for name in kept if not name.endswith((".level.json", ".pak"))]
    assert set(library.chunks) == {m.chunk for m in indexes} and "town/c00" in json.loads(before["shaders.chunks"])["chunks"]
    assert set(library) == {d for m in indexes for d in stage_hashes(m)}


def test_json_lists_the_removed_files_and_a_second_clean_removes_nothing(tmp_path: Path) -> None:
    world, cache, out = tmp_path / "w", tmp_path / "cache", tmp_path / "out"
    make_world(world)
    assert api.cook(world, cache=cache, out=out, jobs=1).ok
    shutil.rmtree(world / "forest")
    first = json.loads(run(world, "--out", out, "--cache", cache, "--json").stdout)
    assert first["removed"] and all("forest" in path for path in first["removed"])
    again = run(world, "--out", out, "--cache", cache)
    assert again.exit_code == 0 and again.stdout == f"removed 0 files no cook of {world} would write\n"
