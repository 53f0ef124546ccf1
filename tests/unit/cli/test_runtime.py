"""``pipeline runtime check`` and ``render``: cooked outputs on the Vulkan driver, and what is refused first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from robust_helpers import GOOD_CHUNKS, make_world
from runtime_helpers import needs_vulkan

from pipeline import api
from pipeline.cli import main
from pipeline.cli.runtime import command


def run(*args: object):
    return CliRunner().invoke(command, [str(a) for a in args])


@pytest.fixture
def cooked(tmp_path: Path) -> tuple[Path, Path]:
    world, out = tmp_path / "w", tmp_path / "out"
    make_world(world)
    assert api.cook(world, cache=tmp_path / "cache", out=out, jobs=1).ok
    return world, out


def test_a_folder_without_chunk_manifests_is_one_located_line(tmp_path: Path) -> None:
    result = run("check", tmp_path, "-q")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{tmp_path}: error: found no outputs to check (no chunk manifest <chunk>.json in it): "
        "name the output folder of a cook (--out, default build)"]


@needs_vulkan
def test_check_creates_every_pipeline_state_and_says_so(cooked) -> None:
    _, out = cooked
    doc = json.loads(run("check", out, "--json").stdout)
    assert doc["created"] == doc["pipelines"] > 0 and doc["validation_errors"] == doc["failed"] == []
    assert doc["chunks"] == sorted(p.relative_to(out).with_suffix("").as_posix() for p in out.glob("*/*.json"))
    text = run("check", out, "-q")
    assert text.exit_code == 0, text.output
    assert text.stdout == (f"{doc['created']} of {doc['pipelines']} pipeline states created on {doc['device']} "
                           f"({doc['modules']} shader modules, {len(doc['chunks'])} chunks); "
                           "0 validation messages, 0 failures\n")
    one = json.loads(run("check", out, "--chunk", GOOD_CHUNKS[0], "--json").stdout)
    assert one["chunks"] == [GOOD_CHUNKS[0]] and one["created"] == one["pipelines"] > 0


@pytest.mark.parametrize("size", ["0x0", "64", "9000x10"])
def test_render_refuses_a_bad_size_before_any_work(cooked, tmp_path: Path, size: str) -> None:
    world, out = cooked
    result = CliRunner().invoke(main, ["runtime", "render", str(world), "forest/c00/tree.glb", "-o",
                                       str(tmp_path / "x.png"), "--out", str(out), "--size", size])
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1 and "--size" in result.stderr and f"got '{size}'" in result.stderr
    assert not (tmp_path / "x.png").exists()
