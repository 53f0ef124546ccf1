"""World discovery: chunks are folders directly holding glTF files."""

from __future__ import annotations

from pathlib import Path

from pipeline.chunks import discover
from pipeline.config import WorldConfig


def test_chunks_levels_and_files(tmp_path: Path) -> None:
    for name in ("forest/c03/rocks.glb", "forest/c03/trees.gltf", "forest/c01/a.GLTF", "desert/x.gltf",
                 "top.gltf", "forest/c03/readme.txt", ".hidden/h.gltf", "forest/empty/.keep"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    chunks = discover(tmp_path, WorldConfig())
    assert [(c.name, c.level, c.files) for c in chunks] == [
        (".", ".", ("top.gltf",)),
        ("desert", "desert", ("desert/x.gltf",)),
        ("forest/c01", "forest", ("forest/c01/a.GLTF",)),
        ("forest/c03", "forest", ("forest/c03/rocks.glb", "forest/c03/trees.gltf")),
    ]
    assert chunks[3].directory == tmp_path / "forest" / "c03"
    deep = discover(tmp_path, WorldConfig(level_depth=2))
    assert [c.level for c in deep] == [".", "desert", "forest/c01", "forest/c03"]
    assert [c.name for c in discover(tmp_path, WorldConfig(), "forest")] == ["forest/c01", "forest/c03"]


def test_corpus_chunks_are_model_folders(corpus: Path) -> None:
    names = [c.name for c in discover(corpus, WorldConfig())]
    assert "glTF-Sample-Assets/Models/BoxVertexColors/glTF-Binary" in names
    assert names == sorted(names)


# ------------------------------------------------------------------ the World object
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from pipeline import api  # noqa: E402
from pipeline.errors import PipelineError  # noqa: E402
from pipeline.world import open_world  # noqa: E402
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"


def deep_world(tmp_path: Path) -> Path:
    """A level_depth = 2 world: levels/forest/{c01,c02} (c02's only file broken) and levels/town/c01."""
    world = tmp_path / "world"
    for chunk in ("levels/forest/c01", "levels/town/c01"):
        shutil.copytree(SAMPLE / "forest" / "c01", world / chunk)
    (world / "levels/forest/c02").mkdir(parents=True)
    (world / "levels/forest/c02/broken.gltf").write_text("{ not json")
    (world / "pipeline.toml").write_text("level_depth = 2\n")
    return world


def test_world_root_is_found_above_a_sub_folder(tmp_path: Path) -> None:
    world = deep_world(tmp_path)
    w = open_world(world / "levels" / "forest")
    assert w.root == world.resolve() and w.scope == "levels/forest" and w.config.level_depth == 2
    assert [c.name for c in w.select().chunks] == ["levels/forest/c01", "levels/forest/c02"]
    assert w.levels == ["levels/forest", "levels/town"]
    one = open_world(world / "levels" / "town" / "c01" / next(p.name for p in (world / "levels/town/c01").iterdir()))
    assert one.select().only_file is not None and [c.name for c in one.select().chunks] == ["levels/town/c01"]


def test_broken_only_file_keeps_its_level_with_level_depth_2(tmp_path: Path) -> None:
    world = deep_world(tmp_path)
    out = tmp_path / "out"
    result = api.cook(world, cache=tmp_path / "cache", out=out, jobs=1)
    assert [e.file for e in result.errors] == ["levels/forest/c02/broken.gltf"]
    levels = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.level.json"))
    assert levels == ["levels/forest.level.json", "levels/town.level.json"]
    report = api.report(world, cache=tmp_path / "cache")
    chunk_levels = {c["name"]: c["level"] for c in report.to_json()["chunks"]}
    assert chunk_levels["levels/forest/c02"] == "levels/forest"
    forest = json.loads((out / "levels/forest.level.json").read_text())
    assert "levels/forest/c02/broken.gltf" in json.dumps(forest)


def test_cooking_a_sub_folder_cooks_that_part_of_the_world(tmp_path: Path) -> None:
    world = deep_world(tmp_path)
    out = tmp_path / "out"
    api.cook(world / "levels" / "town", cache=tmp_path / "cache", out=out, jobs=1)
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json"))
    assert written == ["levels/town.level.json", "levels/town/c01.json"]


def test_unknown_level_or_chunk_says_what_is_close(tmp_path: Path) -> None:
    w = open_world(deep_world(tmp_path))
    with pytest.raises(PipelineError, match=r"no level 'levels/forst' in the world; did you mean 'levels/forest'"):
        w.select(level="levels/forst")
    with pytest.raises(PipelineError, match=r"did you mean 'levels/forest/c01'"):
        w.select(chunk="levels/forest/c1")
    assert [c.name for c in w.select(chunk="levels\\forest\\c01/").chunks] == ["levels/forest/c01"]


def test_a_missing_world_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match="no such file or folder"):
        open_world(tmp_path / "nope")


@pytest.mark.parametrize("args", [
    ["cook", "/nonexistent/world"],
    ["cook", str(SAMPLE), "--jobs", "0"],
    ["report", str(SAMPLE), "--what-if", "NORMAL_MAP=maybe"],
    ["cook", str(SAMPLE), "--level", "forst"],
    ["cook", str(SAMPLE), "--no-such-option"],
    ["keys", str(SAMPLE), "--chunk", "forest/c9"],
])
def test_usage_errors_exit_1_with_one_line(args: list[str], tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pipeline", *args, "--cache", str(tmp_path / "c")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len([line for line in lines if "error" in line.lower()]) == 1, proc.stderr


def test_one_folder_chunk_is_selected_without_walking_the_world_and_as_the_walk_finds_it(tmp_path):
    world_dir = tmp_path / "world"
    shutil.copytree(SAMPLE, world_dir)
    (world_dir / "town" / "market" / "sub").mkdir()
    shutil.copy(next((world_dir / "town" / "square").glob("*.gltf")), world_dir / "town" / "market" / "sub")
    (world_dir / "forest" / ".hidden").mkdir()
    shutil.copy(next((world_dir / "town" / "square").glob("*.gltf")), world_dir / "forest" / ".hidden")
    walked = api.open_world(world_dir)
    for name in [c.name for c in walked.chunks] + ["town/market/", "town\\market"]:
        alone = api.open_world(world_dir)
        assert alone.select(chunk=name) == walked.select(chunk=name)
        assert "_discovered" not in alone.__dict__  # the rest of the world was not walked
    for odd in ("forest/.hidden", "nowhere", "town"):  # not a chunk the walk finds: the walk decides, as before
        with pytest.raises(api.PipelineError):
            api.open_world(world_dir).select(chunk=odd)


def test_copies_of_a_world_load_its_rule_sets_once(tmp_path: Path, monkeypatch) -> None:
    from pipeline.structs import replace

    import msgspec

    import pipeline.rules.load as load
    from pipeline.world import open_world

    (tmp_path / "a.gltf").write_text("{}")
    calls = []
    real = load.load_rulesets
    monkeypatch.setattr(load, "load_rulesets", lambda folder, **kw: calls.append(folder) or real(folder, **kw))
    world = open_world(tmp_path)
    other_cache = replace(world, cache_dir=tmp_path / "elsewhere")
    assert other_cache.rulesets is world.rulesets and len(calls) == 1  # one load, either copy first
    restricted = replace(world, config=msgspec.structs.replace(world.config, axes={"SHADOWS": (True,)}))
    assert restricted.rulesets is not world.rulesets and len(calls) == 2  # other axes: its own
    assert open_world(tmp_path).rulesets is not world.rulesets and len(calls) == 3  # opened again: read again
