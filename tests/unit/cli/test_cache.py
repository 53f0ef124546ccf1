"""``pipeline cache stats`` and ``pipeline cache gc`` on the local cache a cook filled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from robust_helpers import make_world

from pipeline import api
from pipeline.cli.cache import command


@pytest.fixture
def cooked(tmp_path: Path) -> tuple[Path, api.CookResult]:
    make_world(tmp_path / "w")
    result = api.cook(tmp_path / "w", cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    assert result.ok
    return tmp_path / "cache", result


def run(*args: object):
    return CliRunner().invoke(command, [str(a) for a in args])


def test_stats_count_the_jobs_a_cook_stored(cooked) -> None:
    cache, cook = cooked
    doc = json.loads(run("stats", "--cache", cache, "--json").stdout)
    assert doc["local"]["jobs"] == len(cook.plan.jobs) and doc["local"]["uses"] == 1 and doc["remote"] is None
    text = run("stats", "--cache", cache)
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(f"local {cache}: {len(cook.plan.jobs)} jobs, {doc['local']['blobs']} blobs, ")
    assert "last used never" not in text.stdout


def test_gc_keeps_what_a_recent_cook_used(cooked) -> None:
    cache, cook = cooked
    result = run("gc", "--cache", cache, "--keep-days", "30")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"local {cache}: removed 0 jobs, 0 blobs")
    assert f"kept {len(cook.plan.jobs)} jobs" in result.stdout
    assert json.loads(run("stats", "--cache", cache, "--json").stdout)["local"]["jobs"] == len(cook.plan.jobs)
