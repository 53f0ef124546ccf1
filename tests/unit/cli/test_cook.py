"""``pipeline cook``: outputs and a summary, a second cook compiles nothing, a dry run changes nothing,
a broken file is one located line while the other chunks cook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from robust_helpers import GOOD_CHUNKS, make_world, outputs

from pipeline import world as world_module
from pipeline.cli.cook import command
from pipeline.cook import noop
from pipeline.keys import incremental
from pipeline.stamps import stamp_of


def run(world: Path, tmp: Path, *extra: str):
    args = [str(world), "--out", str(tmp / "out"), "--cache", str(tmp / "cache"), "--jobs", "1", *extra]
    return CliRunner().invoke(command, args)


def test_a_second_cook_compiles_nothing_and_writes_the_same_bytes(tmp_path: Path) -> None:
    make_world(tmp_path / "w")
    first = run(tmp_path / "w", tmp_path, "--json")
    assert first.exit_code == 0, first.output
    doc = json.loads(first.stdout)
    assert doc["compiled"] == doc["jobs"] > 0 and doc["errors"] == []
    written = outputs(tmp_path / "out")
    assert {f"{chunk}.json" for chunk in GOOD_CHUNKS} <= set(written)
    again = run(tmp_path / "w", tmp_path, "--json")
    assert json.loads(again.stdout)["compiled"] == 0 and json.loads(again.stdout)["cache_hits"] == doc["jobs"]
    assert outputs(tmp_path / "out") == written
    text = run(tmp_path / "w", tmp_path)
    assert text.exit_code == 0 and text.stdout.startswith("cooked ")


def test_a_dry_run_lists_the_jobs_and_writes_nothing(tmp_path: Path) -> None:
    make_world(tmp_path / "w")
    doc = json.loads(run(tmp_path / "w", tmp_path, "--dry-run", "--json").stdout)
    text = run(tmp_path / "w", tmp_path, "--dry-run")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert len([line for line in lines if line.startswith("would compile ")]) == len(doc["compile"]) == doc["jobs"] > 0
    assert lines[-1].endswith("nothing was changed")
    assert not (tmp_path / "out").exists()


def test_a_broken_file_is_one_located_line_and_the_other_chunks_cook(tmp_path: Path, write_gltf, monkeypatch) -> None:
    make_world(tmp_path / "w")
    write_gltf(tmp_path / "w" / "town" / "c00" / "bad.gltf", {"asset": {"version": "2.0"}, "extensionsRequired": ["X_y"]})
    monkeypatch.chdir(tmp_path)
    result = run(Path("w"), Path("."), "-q")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        "w/town/c00/bad.gltf: /extensionsRequired/0: error: required extension 'X_y' is not supported"]
    assert (tmp_path / "out" / "forest" / "c00.json").is_file()


MATRIX = ('[platforms.desktop]\ntargets = ["vulkan1.2"]\n[platforms.apple]\ntargets = ["metal"]\n'
          '[platforms.web]\ntargets = ["webgl2", "webgpu"]\n')


def test_platform_cooks_only_that_platform_s_targets_and_json_names_them(tmp_path: Path) -> None:
    from family_worlds import triangle_world
    from target_helpers import MATERIALS, TARGETS_DATA

    from pipeline.outputs import manifest as mf

    world = triangle_world(tmp_path / "w", TARGETS_DATA / "rules", MATERIALS, [({"name": "plain"}, ())], MATRIX)
    web = run(world, tmp_path, "--platform", "web", "--json")
    assert web.exit_code == 0, web.output
    doc = json.loads(web.stdout)
    assert doc["platforms"] == {"web": {"portable": ["webgl2", "webgpu-relaxed"]}}
    assert doc["targets"] == {"portable": ["webgl2", "webgpu-relaxed"]} and doc["compiled"] == doc["jobs"] == 4
    (entry,) = mf.load_chunk_manifest(tmp_path / "out" / "level" / "props.json").keys.values()
    assert set(entry.targets) == {"webgl2", "webgpu-relaxed"}
    every = run(world, tmp_path, "--json")
    doc = json.loads(every.stdout)
    assert sorted(doc["platforms"]) == ["apple", "desktop", "web"] and doc["cache_hits"] == 4
    assert doc["targets"] == {"portable": ["metal-relaxed-msl2.1", "vulkan1.2-relaxed", "webgl2", "webgpu-relaxed"]}
    (entry,) = mf.load_chunk_manifest(tmp_path / "out" / "level" / "props.json").keys.values()
    assert set(entry.targets) == set(doc["targets"]["portable"])
    wrong = run(world, tmp_path, "--platform", "wbe")
    assert wrong.exit_code == 1
    assert wrong.output.strip().splitlines()[-1] == \
        "--platform: error: unknown platform 'wbe' (did you mean 'web'?) (platforms: apple, desktop, web)"


def _masked(path: Path) -> None:
    """Edit a glTF file so that its draws need other keys (its chunk's index changes)."""
    doc = json.loads(path.read_text())
    for material in doc.get("materials", []):
        material["alphaMode"] = "MASK" if material.get("alphaMode") != "MASK" else "OPAQUE"
    path.write_text(json.dumps(doc))


def _stamp_args(tmp: Path, world: Path) -> dict:
    return noop.parse_args([str(world), "--out", str(tmp / "out"), "--cache", str(tmp / "cache"), "--jobs", "1"])


def test_the_missed_no_op_check_s_walk_stands_for_the_cook_s_stats(tmp_path: Path, monkeypatch) -> None:
    make_world(tmp_path / "w")
    assert run(tmp_path / "w", tmp_path).exit_code == 0  # stamped
    house = tmp_path / "w" / "town" / "c00" / "house.gltf"
    _masked(house)
    assert noop.check(_stamp_args(tmp_path, tmp_path / "w")) is None  # missed: its walk is left to the cook
    stats = []
    monkeypatch.setattr(incremental, "stamp_of", lambda p: stats.append(p) or stamp_of(p))
    doc = json.loads(run(tmp_path / "w", tmp_path, "--json").stdout)
    assert any(p.endswith("town/c00.json") for p in doc["written"]) and stats == []  # the walk's stamps, no stat
    assert noop.check(_stamp_args(tmp_path, tmp_path / "w")) is not None  # and it stamped what it cooked


def test_the_missed_no_op_check_s_walk_is_where_the_cook_finds_the_chunks(tmp_path: Path, monkeypatch) -> None:
    make_world(tmp_path / "w")
    assert run(tmp_path / "w", tmp_path).exit_code == 0  # stamped
    added = tmp_path / "w" / "town" / "c09" / "house.gltf"  # a chunk the stamped cook did not know
    added.parent.mkdir()
    added.write_bytes((tmp_path / "w" / "town" / "c00" / "house.gltf").read_bytes())
    assert noop.check(_stamp_args(tmp_path, tmp_path / "w")) is None  # missed: its walk is left to the cook
    monkeypatch.setattr(world_module, "discover_folders", lambda *_: pytest.fail("the world was walked again"))
    doc = json.loads(run(tmp_path / "w", tmp_path, "--json").stdout)
    assert doc["errors"] == [] and any(p.endswith("town/c09.json") for p in doc["written"])
    assert json.loads((tmp_path / "out" / "town" / "c09.json").read_text())["chunk"] == "town/c09"


def test_an_edit_after_the_walk_is_no_input_the_stamp_vouches_for(tmp_path: Path) -> None:
    make_world(tmp_path / "w")
    assert run(tmp_path / "w", tmp_path).exit_code == 0
    house = tmp_path / "w" / "town" / "c00" / "house.gltf"
    _masked(house)
    assert noop.check(_stamp_args(tmp_path, tmp_path / "w")) is None
    _masked(house)  # back as it was, after the walk: the cook's stamps say "edited", the file says "as before"
    doc = json.loads(run(tmp_path / "w", tmp_path, "--json").stdout)
    assert doc["errors"] == []
    assert noop.check(_stamp_args(tmp_path, tmp_path / "w")) is None  # no stamp: the next cook looks again
    again = json.loads(run(tmp_path / "w", tmp_path, "--json").stdout)
    index = json.loads((tmp_path / "out" / "town" / "c00.json").read_text())
    fresh = tmp_path / "fresh"
    make_world(fresh / "w")
    assert run(fresh / "w", fresh).exit_code == 0
    assert index == json.loads((fresh / "out" / "town" / "c00.json").read_text()) and again["errors"] == []
