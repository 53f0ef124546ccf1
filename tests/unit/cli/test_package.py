"""Start-up: ``--help`` from the command table, and the no-op cook answered by file stats.

No timing here (bench/ measures it); what is checked is what runs: the modules a
process imported, the output and exit code against the full path's.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import click
import pytest

from pipeline.cli import COMMANDS, LazyGroup
from paths import REPO
from startup_helpers import heavy_loaded, probe_run

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"


def test_command_table_matches_the_commands() -> None:
    modules = sorted(p.stem for p in (ROOT / "pipeline" / "cli").glob("*.py") if not p.stem.startswith("_"))
    assert sorted(module for module, _ in COMMANDS.values()) == modules
    group = LazyGroup()
    for name, (module, summary) in COMMANDS.items():
        command = group._load(module)
        assert command is not None and command.name == name
        assert " ".join((command.help or "").split("\n\n")[0].split()) == summary, name
        for limit in (30, 45, 80):
            assert click.Command(name, help=summary).get_short_help_str(limit) == command.get_short_help_str(limit)


def _but_duration(stdout: str) -> str:
    """A cook's JSON document with its wall time (the one field that differs between runs) blanked,
    once it is checked to be a number of seconds."""
    doc = json.loads(stdout)
    assert isinstance(doc["duration"], float) and doc["duration"] >= 0
    return stdout.replace(f'"duration": {doc["duration"]!r}', '"duration": 0', 1)


def test_help_imports_no_command(tmp_path: Path) -> None:
    done = probe_run(["--help"], tmp_path, tmp_path / "modules.json")
    assert done.returncode == 0, done.stderr
    assert "watch" in done.stdout and "verify-family" in done.stdout
    loaded = json.loads((tmp_path / "modules.json").read_text())
    assert not [m for m in loaded if m.startswith("pipeline.cli.") or m.split(".")[0] in ("pydantic", "numpy")]


@pytest.mark.slow
def test_noop_cook_imports_nothing_it_does_not_run(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    args = ["cook", str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")]
    first = probe_run(args, tmp_path, tmp_path / "m1.json")
    assert first.returncode == 0, first.stderr
    assert "pipeline.api" in heavy_loaded(tmp_path / "m1.json")  # the full path (it reads the rule sets): the probe sees what was imported
    full_noop = probe_run(args + ["--json"], tmp_path, tmp_path / "m2.json")  # a full no-op: it writes the stamp
    fast_noop = probe_run(args + ["--json"], tmp_path, tmp_path / "m3.json")
    assert fast_noop.returncode == 0 and _but_duration(fast_noop.stdout) == _but_duration(full_noop.stdout)
    assert json.loads(fast_noop.stdout)["compiled"] == 0
    assert heavy_loaded(tmp_path / "m3.json") == []
    text = probe_run(args, tmp_path, tmp_path / "m4.json")
    assert text.stdout.startswith("cooked ") and "0 compiled" in text.stdout and heavy_loaded(tmp_path / "m4.json") == []


@pytest.mark.slow
def test_noop_answer_equals_the_full_path_and_any_change_takes_it(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    args = ["cook", str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--json"]
    probe_run(args, tmp_path, tmp_path / "m.json")  # compiles and writes: the stamp of the no-op after it
    stamps = list((tmp_path / "cache" / "noop-stamps").glob("*.json"))
    assert len(stamps) == 1
    fast = probe_run(args, tmp_path, tmp_path / "m.json")
    assert heavy_loaded(tmp_path / "m.json") == []
    stamps[0].unlink()
    full = probe_run(args, tmp_path, tmp_path / "m.json")
    assert "pipeline.api" in heavy_loaded(tmp_path / "m.json")
    assert _but_duration(fast.stdout) == _but_duration(full.stdout) and fast.returncode == full.returncode == 0
    # a changed input, a removed output, a bad file: the full path, with its errors
    victim = next(world.rglob("*.gltf"))
    victim.write_text("{")
    bad = probe_run(args, tmp_path, tmp_path / "m.json")
    assert bad.returncode == 1 and "invalid JSON" in bad.stdout and "pipeline.api" in heavy_loaded(tmp_path / "m.json")
    probe_run(args, tmp_path, tmp_path / "m.json")  # a full no-op with the bad file: its stamp
    again = probe_run(args, tmp_path, tmp_path / "m.json")  # answered by the stamp, errors included
    assert heavy_loaded(tmp_path / "m.json") == []
    next((tmp_path / "cache" / "noop-stamps").glob("*.json")).unlink()
    full_again = probe_run(args, tmp_path, tmp_path / "m.json")
    assert (again.returncode, _but_duration(again.stdout), again.stderr) == (
        full_again.returncode, _but_duration(full_again.stdout), full_again.stderr)
    output = tmp_path / "out" / "shaders.pak"  # the shader library
    output.unlink()
    restored = probe_run(args, tmp_path, tmp_path / "m.json")
    assert "pipeline.api" in heavy_loaded(tmp_path / "m.json") and output.exists()
    assert restored.returncode == 1 and "invalid JSON" in restored.stdout  # the bad file is still reported


def test_stamp_records_stats_and_refuses_inputs_changed_during_the_cook(tmp_path: Path, monkeypatch) -> None:
    from pipeline.cook import noop

    monkeypatch.chdir(tmp_path)
    world, rules, materials = tmp_path / "world", tmp_path / "rules", tmp_path / "materials"
    for folder in (world / "a", rules, materials):
        folder.mkdir(parents=True)
    (world / "a" / "x.gltf").write_text("{}")
    args = noop.parse_args([str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    assert args is not None and noop.parse_args([str(world), "--verify"]) is None
    common = dict(world_root=str(world), rules_dir=str(rules), materials_dir=str(materials), compiler_dir=None,
                  doc="{}\n", text="cooked\n")
    noop.write_stamp(args, **common, started_ns=0)  # every input "changed" after the cook started
    assert noop.check(args) is None
    noop.write_stamp(args, **common, started_ns=time.time_ns() + 1)
    assert noop.check(args)["text"] == "cooked\n"
    (world / "a" / "y.gltf").write_text("{}")  # a new file: its folder's stat changes
    assert noop.check(args) is None


def test_stamp_sees_a_same_size_edit_with_its_mtime_put_back(tmp_path: Path, monkeypatch) -> None:
    from pipeline.cook import noop

    monkeypatch.chdir(tmp_path)
    world, rules, materials = tmp_path / "world", tmp_path / "rules", tmp_path / "materials"
    for folder in (world / "a", rules, materials):
        folder.mkdir(parents=True)
    victim = world / "a" / "x.gltf"
    victim.write_text('{"a": 1}')
    args = noop.parse_args([str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")])
    noop.write_stamp(args, world_root=str(world), rules_dir=str(rules), materials_dir=str(materials),
                     compiler_dir=None, doc="{}\n", text="cooked\n", started_ns=time.time_ns() + 1)
    assert noop.check(args) is not None
    before = victim.stat()
    time.sleep(0.01)  # a ctime the edit can change
    victim.write_text('{"a": 2}')  # same size
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back
    assert victim.stat().st_size == before.st_size and victim.stat().st_mtime_ns == before.st_mtime_ns
    assert noop.check(args) is None


@pytest.mark.slow
def test_one_chunk_edit_with_every_job_cached_starts_no_process_pool(tmp_path: Path) -> None:
    """A pool's machinery (multiprocessing, concurrent.futures.process) is imported when a pool starts:
    an edit that rescans one file of one chunk and compiles nothing needs none."""
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    args = ["cook", str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "-j", "2"]
    first = probe_run(args, tmp_path, tmp_path / "m1.json")
    assert first.returncode == 0, first.stderr
    edited = world / "forest" / "c00" / "terrain.gltf"
    edited.write_text(edited.read_text() + " ")  # new bytes, the same scene
    edit = probe_run(args + ["--chunk", "forest/c00", "--json"], tmp_path, tmp_path / "m2.json")
    assert edit.returncode == 0, edit.stderr
    assert json.loads(edit.stdout)["compiled"] == 0
    loaded = set(json.loads((tmp_path / "m2.json").read_text()))
    assert "pipeline.api" in loaded  # the full path ran
    assert not loaded & {"multiprocessing", "concurrent.futures.process"}
    # the cold cook compiled on a pool: the probe sees that machinery when it was imported
    assert "concurrent.futures.process" in json.loads((tmp_path / "m1.json").read_text())


@pytest.mark.parametrize("module", ["pipeline.facts", "pipeline.scan.gltf.structs", "pipeline.rules.models"])
def test_the_structs_every_cook_converts_into_hold_evaluated_annotations(module: str) -> None:
    """msgspec and the rule checker read these classes' annotations in every process: as objects, not
    as strings that each process would parse and evaluate again."""
    import importlib
    import msgspec
    structs = [c for c in vars(importlib.import_module(module)).values()
               if isinstance(c, type) and issubclass(c, msgspec.Struct) and c.__module__ == module]
    assert structs
    named = {f"{c.__name__}.{n}": a for c in structs for n, a in c.__annotations__.items() if isinstance(a, str)}
    assert named == {}
