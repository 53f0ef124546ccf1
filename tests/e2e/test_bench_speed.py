"""The bench's peer build: a build.ninja of the cook's plan, built by the real ninja and glslangValidator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from paths import REPO

ROOT = REPO
sys.path.insert(0, str(ROOT / "bench"))

import bench_speed  # noqa: E402

from pipeline import api  # noqa: E402


@pytest.mark.slow
def test_ninja_peer_builds_every_job_of_the_plan_then_does_nothing(tmp_path: Path) -> None:
    pytest.importorskip("ninja", reason="the peer build needs PyPI ninja (test extra)")
    world = api.open_world(ROOT / "examples" / "sample_world")
    cooked = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=2)
    assert cooked.ok and cooked.plan.jobs
    build = tmp_path / "ninja"
    count = bench_speed.write_ninja(cooked.plan.jobs, world.materials_dir, build)
    assert count == len(cooked.plan.jobs)
    first = subprocess.run([bench_speed.ninja_exe(), "-C", str(build), "-j", "2"], capture_output=True, text=True)
    assert first.returncode == 0, first.stdout[-2000:]
    built = sorted(p.stem for p in (build / "spv").glob("*.spv"))
    assert built == sorted(cooked.plan.jobs)
    assert all(p.read_bytes()[:4] == b"\x03\x02\x23\x07" for p in (build / "spv").glob("*.spv"))  # SPIR-V magic
    again = subprocess.run([bench_speed.ninja_exe(), "-C", str(build), "-j", "2"], capture_output=True, text=True)
    assert again.returncode == 0 and "no work to do" in again.stdout
