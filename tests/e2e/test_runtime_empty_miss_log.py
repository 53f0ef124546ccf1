"""A render asked for a miss log writes one even when no draw missed, and check-log reads it as "no misses"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from robust_helpers import run_cli
from runtime_helpers import SAMPLE, needs_vulkan

FILE = "town/market/car.glb"  # every draw of it has its key in a complete cook


@pytest.mark.slow
@needs_vulkan
def test_a_render_without_misses_leaves_an_empty_log_that_check_log_accepts(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    cooked = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "build", "-q")
    assert cooked.returncode == 0, cooked.stderr
    log = tmp_path / "logs" / "misses.jsonl"  # its folder does not exist yet
    render = run_cli("runtime", "render", world, FILE, "-o", tmp_path / "car.png", "--out", tmp_path / "build",
                     "--miss-log", log, timeout=600)
    assert render.returncode == 0, render.stderr
    assert "(0 through a fallback)" in render.stdout
    assert log.is_file() and log.read_bytes() == b""

    check = run_cli("check-log", world, log, "--out", tmp_path / "build")
    assert check.returncode == 0, check.stderr
    assert check.stdout == f"{log}: no misses: no draw was drawn through a fallback\n"
    as_json = run_cli("check-log", world, log, "--out", tmp_path / "build", "--json")
    assert as_json.returncode == 0
    doc = json.loads(as_json.stdout)
    assert (doc["misses"], doc["covered"], doc["uncovered"], doc["errors"]) == ([], 0, 0, [])


@needs_vulkan
def test_opening_the_log_keeps_what_an_earlier_run_appended(tmp_path: Path) -> None:
    from pipeline.runtime.misses import MissLog, read_log

    log = tmp_path / "misses.jsonl"
    MissLog(log).append(key="pbr/forward{A=1}", chunk="town/market", draw={"file": FILE}, pass_="pbr/forward")
    MissLog(log)  # a second run opens the same log: appended to, never truncated
    [(line, record)] = read_log(log)
    assert line == 1 and record["key"] == "pbr/forward{A=1}"
