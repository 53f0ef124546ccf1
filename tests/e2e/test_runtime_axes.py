"""Runtime axes end to end: the sample world cooks SHADOWS x QUALITY, the ship check proves it, a render at
an uncooked axis value logs a miss, folding the log cooks it, and check-log then calls it covered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from robust_helpers import run_cli
from runtime_helpers import SAMPLE, needs_vulkan

from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader
from pipeline.outputs.pak_write import write_pak

FILE = "forest/c00/terrain.gltf"  # one lit draw: four forward keys (SHADOWS x QUALITY)


def _world(tmp: Path, axes: str = "") -> Path:
    world = tmp / "world"
    shutil.copytree(SAMPLE, world)
    if axes:
        with open(world / "pipeline.toml", "a") as f:
            f.write(f"\n[axes]\n{axes}\n")
    return world


def _cook(world: Path, tmp: Path, *extra) -> None:
    done = run_cli("cook", world, "--cache", tmp / "cache", "--out", tmp / "build", "-q", *extra)
    assert done.returncode == 0, done.stderr


def _ship(world: Path, tmp: Path):
    done = run_cli("verify-ship", world, "--cache", tmp / "cache", "--out", tmp / "build", "--json")
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
def test_the_sample_world_ships_every_axis_combination_and_names_each_hole(tmp_path: Path) -> None:
    world = _world(tmp_path)
    _cook(world, tmp_path)
    code, doc = _ship(world, tmp_path)
    assert code == 0 and doc["ok"] and doc["holes"] == []
    assert doc["draws"] == 59 and doc["checked"] > 3 * doc["draws"]  # forward is checked per combination
    index = json.loads(run_cli("show", tmp_path / "build" / "forest" / "c00.json").stdout)
    [terrain] = [d for d in index["draws"] if d["file"] == FILE]
    rows = terrain["passes"]["pbr/forward"]["axes"]
    assert [r["values"] for r in rows] == [{"QUALITY": q, "SHADOWS": s} for q in ("HIGH", "LOW") for s in (False, True)]
    assert len({r["key"] for r in rows}) == 4 and all(r["pipeline"] in index["pipelines"] for r in rows)
    low = next(r["key"] for r in rows if r["values"] == {"QUALITY": "LOW", "SHADOWS": True})

    # one blob of the library removed: every draw/combination that needs it is a named hole
    pak = tmp_path / "build" / "shaders.pak"
    reader = PakReader(pak)
    entry = mf.load_chunk_manifest(tmp_path / "build" / "forest" / "c00.json").keys[low]
    gone = entry.stages["fragment"]
    kept = [d for d in reader if d != gone]
    pak.write_bytes(write_pak({d: reader.get(d) for d in kept}, {d: reader.reflection(d) for d in kept}))
    code, doc = _ship(world, tmp_path)
    assert code == 1
    hole = next(h for h in doc["holes"] if h["draw"]["file"] == FILE)
    assert hole == {"chunk": "forest/c00", "draw": hole["draw"], "pass": "pbr/forward",
                    "axes": {"QUALITY": "LOW", "SHADOWS": True}, "key": low,
                    "missing": f"fragment blob {gone[:12]} of key {low}: missing from the shader library"}
    text = run_cli("verify-ship", world, "--cache", tmp_path / "cache", "--out", tmp_path / "build")
    assert text.returncode == 1
    assert (f"error: forest/c00 {FILE}#/meshes/0/primitives/0 (node 0) pbr/forward [QUALITY=LOW,SHADOWS=1]: "
            f"fragment blob {gone[:12]}") in text.stderr


@pytest.mark.slow
def test_a_restricted_cook_has_a_hole_for_each_removed_axis_value(tmp_path: Path) -> None:
    world = _world(tmp_path, 'QUALITY = ["HIGH"]')
    _cook(world, tmp_path)
    assert _ship(world, tmp_path)[0] == 0  # what this build allows is all there
    shutil.copy(SAMPLE / "pipeline.toml", world / "pipeline.toml")  # a build that allows LOW too
    code, doc = _ship(world, tmp_path)
    assert code == 1 and doc["holes"]
    assert {h["axes"]["QUALITY"] for h in doc["holes"]} == {"LOW"}
    assert {h["missing"] for h in doc["holes"]} == {"no row for these axis values in the draw's axes table"}


@pytest.mark.slow
@needs_vulkan
def test_a_miss_at_an_uncooked_axis_value_is_folded_into_the_next_cook(tmp_path: Path) -> None:
    world = _world(tmp_path, 'QUALITY = ["HIGH"]')
    _cook(world, tmp_path)
    log = tmp_path / "misses.jsonl"
    render = run_cli("runtime", "render", world, FILE, "-o", tmp_path / "a.png", "--out", tmp_path / "build",
                     "--axis", "QUALITY=LOW", "--miss-log", log, timeout=600)
    assert render.returncode == 0, render.stderr
    assert "(1 through a fallback)" in render.stdout
    [miss] = [json.loads(line) for line in log.read_text().splitlines()]
    assert miss["axes"] == {"QUALITY": "LOW", "SHADOWS": False} and miss["draw"]["file"] == FILE

    check = run_cli("check-log", world, log, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "--json")
    assert check.returncode == 1
    assert [m["status"] for m in json.loads(check.stdout)["misses"]] == ["uncovered"]

    _cook(world, tmp_path, "--include-log", log)
    check = run_cli("check-log", world, log, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "--json")
    assert check.returncode == 0, check.stdout
    [verdict] = json.loads(check.stdout)["misses"]
    assert (verdict["status"], verdict["covered"]) == ("folded", True)
    again = run_cli("runtime", "render", world, FILE, "-o", tmp_path / "b.png", "--out", tmp_path / "build",
                    "--axis", "QUALITY=LOW", "--miss-log", tmp_path / "again.jsonl", timeout=600)
    assert again.returncode == 0 and "(0 through a fallback)" in again.stdout

    # the same log against a build whose rules allow LOW: covered by an axis
    shutil.copy(SAMPLE / "pipeline.toml", world / "pipeline.toml")
    _cook(world, tmp_path)
    check = run_cli("check-log", world, log, "--out", tmp_path / "build", "--cache", tmp_path / "cache", "--json")
    assert check.returncode == 0
    assert [m["status"] for m in json.loads(check.stdout)["misses"]] == ["axis"]


@pytest.mark.slow
@needs_vulkan
def test_runtime_check_creates_every_axis_pipeline_state(tmp_path: Path) -> None:
    world = _world(tmp_path)
    _cook(world, tmp_path)
    done = run_cli("runtime", "check", tmp_path / "build", "--json", timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    states = set()
    for path in (tmp_path / "build").rglob("*.json"):
        if not path.name.endswith(".level.json"):
            manifest = mf.load_chunk_manifest(path)
            states |= {r["pipeline"] for d in manifest.draws for u in d["passes"].values() for r in u.get("axes", ())}
    assert states and doc["created"] == doc["pipelines"] and len(states) <= doc["pipelines"]


@pytest.mark.slow
def test_the_corpus_ships_every_axis_combination(corpus: Path, tmp_path: Path) -> None:
    from pipeline import api

    world = api.open_world(corpus)
    api.cook(world, cache=tmp_path / "cache", out=tmp_path / "build", jobs=2)
    result = api.verify_ship(world, out=tmp_path / "build", cache=tmp_path / "cache")
    assert result.ok, [h.line() for h in result.holes[:5]]
    assert result.draws > 2000 and result.checked > 4 * result.chunks
