"""``pipeline clean``: the outputs of chunks a world no longer has go; everything else stays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from robust_helpers import make_world, outputs

from pipeline import api
from pipeline.cli.clean import command


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
    assert len(gone) == 3  # the chunk's manifest and pak, the level's manifest
    monkeypatch.chdir(tmp_path)
    result = run("w", "--out", "out", "--cache", "cache")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted(f"removed out/{name}" for name in gone)
    assert lines[-1] == f"removed {len(gone)} files no cook of w would write"
    assert outputs(out) == {name: data for name, data in before.items() if name not in gone} | {"notes.txt": b"not an output"}


def test_json_lists_the_removed_files_and_a_second_clean_removes_nothing(tmp_path: Path) -> None:
    world, cache, out = tmp_path / "w", tmp_path / "cache", tmp_path / "out"
    make_world(world)
    assert api.cook(world, cache=cache, out=out, jobs=1).ok
    shutil.rmtree(world / "forest")
    first = json.loads(run(world, "--out", out, "--cache", cache, "--json").stdout)
    assert first["removed"] and all("forest" in path for path in first["removed"])
    again = run(world, "--out", out, "--cache", cache)
    assert again.exit_code == 0 and again.stdout == f"removed 0 files no cook of {world} would write\n"
