"""``pipeline report``: the funnel in JSON before and after a cook, a budget, the same bytes to a file."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from robust_helpers import make_world

from pipeline import api
from pipeline.cli import main
from pipeline.cli.report import command


def run(world: Path, cache: Path, *extra: str):
    return CliRunner().invoke(command, [str(world), "--cache", str(cache), *extra])


def pbr_total(doc: dict) -> dict:
    return next(t for t in doc["totals"] if t["shader"] == "pbr")


def test_json_counts_the_required_keys_and_the_cook_s_binaries(tmp_path: Path) -> None:
    world, cache = tmp_path / "w", tmp_path / "cache"
    make_world(world)
    required = len(api.keys(api.open_world(world), cache=cache).required.keys)
    before = json.loads(run(world, cache, "--json").stdout)
    assert pbr_total(before)["required"] == required
    assert pbr_total(before)["unique_binaries"] is None and pbr_total(before)["missing"] > 0
    assert api.cook(world, cache=cache, out=tmp_path / "out", jobs=1).ok
    after = pbr_total(json.loads(run(world, cache, "--format", "json").stdout))
    assert after["required"] == required and after["missing"] == 0 and after["unique_binaries"] > 0


def test_a_budget_below_the_keys_exits_1_naming_the_overrun(tmp_path: Path) -> None:
    world, cache = tmp_path / "w", tmp_path / "cache"
    make_world(world)
    required = pbr_total(json.loads(run(world, cache, "--json").stdout))["required"]
    result = run(world, cache, "--budget", str(required - 1))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [  # the runtime axes are what would save keys
        f"--budget: error: budget: world (all): {required} required keys exceed the budget of {required - 1} (+1); "
        "making these features dynamic would save: pbr.QUALITY (-2), pbr.SHADOWS (-2)"]
    assert result.stdout  # the report is still written
    assert run(world, cache, "--budget", str(required)).exit_code == 0


def test_output_file_holds_the_bytes_stdout_would(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    world, cache = tmp_path / "w", tmp_path / "cache"
    make_world(world)
    for fmt in ("json", "csv", "table"):
        printed = run(world, cache, "--format", fmt).stdout
        assert run(world, cache, "--format", fmt, "-o", str(tmp_path / f"r.{fmt}")).stdout == ""
        assert (tmp_path / f"r.{fmt}").read_text() == printed


def test_cooks_without_timings_is_one_line_and_exit_1_from_the_command_line(tmp_path: Path) -> None:
    make_world(tmp_path / "w")
    result = CliRunner().invoke(main, ["report", str(tmp_path / "w"), "--cooks", "2"])  # as the command runs it
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1 and "--cooks" in result.stderr and "needs --timings" in result.stderr


def test_platform_reports_only_that_platform_s_targets(tmp_path: Path) -> None:
    from family_worlds import triangle_world
    from target_helpers import MATERIALS, TARGETS_DATA

    toml = '[platforms.desktop]\ntargets = ["vulkan1.2"]\n[platforms.web]\ntargets = ["webgl2", "webgpu"]\n'
    world = triangle_world(tmp_path / "w", TARGETS_DATA / "rules", MATERIALS, [({"name": "plain"}, ())], toml)
    every = json.loads(run(world, tmp_path / "cache", "--json").stdout)["targets"]
    web = json.loads(run(world, tmp_path / "cache", "--json", "--platform", "web").stdout)["targets"]
    assert sorted({r["target"] for r in every}) == ["vulkan1.2-relaxed", "webgl2", "webgpu-relaxed"]
    assert sorted({r["target"] for r in web}) == ["webgl2", "webgpu-relaxed"]
    assert {r["status"] for r in every} == {"not cooked"} and all(r["platforms"] for r in every)
    wrong = run(world, tmp_path / "cache", "--platform", "mobile")
    assert wrong.exit_code == 1 and "--platform: error: unknown platform 'mobile'" in wrong.output
