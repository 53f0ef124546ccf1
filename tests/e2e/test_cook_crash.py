"""A cook killed half way keeps what it finished: the next cook compiles only the rest."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.outputs.atomic import temp_path_for
from pipeline.compile.scheduler import JobRunner
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"


class Crash(RuntimeError):
    """The stand-in for a killed cook."""


class CrashingCompiler(JobRunner):
    """Compiles ``budget`` jobs, then raises as if the process died."""

    def __init__(self, materials_dir: Path, budget: int):
        super().__init__(materials_dir, "capi", 1)
        self.budget = budget

    def _batch(self, jobs):
        if self.calls + len(jobs) > self.budget:
            raise Crash(f"killed after {self.calls} compiles")
        return super()._batch(jobs)


def dead_pid() -> int:
    """A pid no process has (so a temp file naming it is stale)."""
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


@pytest.fixture
def world(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "world")
    return api.open_world(tmp_path / "world", materials=MATERIALS)


def test_interrupted_cook_resumes_with_only_the_remaining_jobs(world, tmp_path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    crashing = CrashingCompiler(MATERIALS, budget=10)
    with pytest.raises(Crash):
        api.cook(world, cache=cache, out=out, jobs=1, compiler=crashing)
    assert crashing.calls == 10 and not out.exists()          # died before writing outputs

    compiler = JobRunner(MATERIALS, "capi", 1)
    result = api.cook(world, cache=cache, out=out, jobs=1, compiler=compiler)
    assert result.errors == []
    assert compiler.calls == len(result.plan.jobs) - 10 == len(result.run.compiled)
    assert result.run.cache_hits == 10


def test_stale_temp_files_are_removed_before_writing(world, tmp_path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    api.cook(world, cache=cache, out=out, jobs=1)
    target = out / "forest" / "c00.json"
    stale = temp_path_for(target).with_name(f".c00.json.tmp-{dead_pid()}-deadbeef")
    live = temp_path_for(target)                               # this process: a live writer
    stale.write_bytes(b"half a manifest")
    live.write_bytes(b"being written")
    result = api.cook(world, cache=cache, out=out, jobs=1)
    assert result.written == [] and not stale.exists() and live.exists()
