"""``pipeline check-log``: each miss of a runtime's log, said cooked, stale or made at run time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from robust_helpers import make_world

from pipeline import api
from pipeline.cli.check_log import command
from pipeline.outputs.manifest import load_chunk_manifest
from pipeline.runtime.misses import MissLog

CHUNK, FILE, PASS = "forest/c00", "forest/c00/tree.glb", "pbr/forward"


@pytest.fixture
def cooked(tmp_path: Path) -> tuple[Path, Path, Path]:
    world, cache, out = tmp_path / "w", tmp_path / "cache", tmp_path / "out"
    make_world(world)
    assert api.cook(world, cache=cache, out=out, jobs=1).ok
    return world, cache, out


def run(cooked, log: Path, *extra: str):
    world, cache, out = cooked
    return CliRunner().invoke(command, [str(world), str(log), "--out", str(out), "--cache", str(cache), *extra])


def test_an_empty_log_says_no_misses(cooked, tmp_path: Path) -> None:
    log = MissLog(tmp_path / "misses.jsonl").path
    result = run(cooked, log)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{log}: no misses: no draw was drawn through a fallback\n"


def test_a_miss_of_a_cooked_key_is_covered(cooked, tmp_path: Path) -> None:
    _, _, out = cooked
    record = next(r for r in load_chunk_manifest(out / f"{CHUNK}.json").draws if r["file"] == FILE)
    log = MissLog(tmp_path / "misses.jsonl")
    draw = {f: record[f] for f in ("file", "node", "mesh", "primitive", "material", "variant")}
    log.append(key=record["passes"][PASS]["key"], chunk=CHUNK, draw=draw, pass_=PASS)
    result = run(cooked, log.path)
    assert result.exit_code == 0, result.output
    first, summary = result.stdout.splitlines()
    assert first.startswith(f"{log.path}:1: note: cooked: {record['passes'][PASS]['key']} for {FILE} ")
    assert summary == "1 misses: 1 covered, 0 not covered"
    doc = json.loads(run(cooked, log.path, "--json").stdout)
    assert (doc["covered"], doc["uncovered"]) == (1, 0)


def test_a_line_that_is_not_a_miss_is_a_located_error_and_exit_1(cooked, tmp_path: Path) -> None:
    log = tmp_path / "misses.jsonl"
    log.write_text("not json\n")
    result = run(cooked, log)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{log}:1: error: ")
