"""The instruction count of a one-file edit, two setups side by side (bench/bench_edit_instructions.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from paths import REPO

sys.path.insert(0, str(REPO / "bench"))

import bench_edit_instructions  # noqa: E402
import worldgen  # noqa: E402

from pipeline import api  # noqa: E402


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed: it counts the instructions")
def test_the_same_code_counts_the_same_edit_alike_and_the_world_is_left_as_it_was(tmp_path: Path) -> None:
    spec = worldgen.WorldSpec(chunks=2, files_per_chunk=3, props=6)
    root = tmp_path / "world"
    worldgen.generate(root, spec)
    before = {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    world = api.open_world(root, rules=REPO / "rules", materials=REPO / "materials")
    assert api.cook(world, cache=tmp_path / "a-cache", out=tmp_path / "a-out", jobs=2).ok
    shutil.copytree(tmp_path / "a-cache", tmp_path / "b-cache")
    shutil.copytree(tmp_path / "a-out", tmp_path / "b-out")
    setups = [(REPO, tmp_path / "a-cache", tmp_path / "a-out"), (REPO, tmp_path / "b-cache", tmp_path / "b-out")]
    rows = bench_edit_instructions.measure(root, setups, runs=1, props=spec.props)
    (a,), (b,) = rows[0]["counts"], rows[1]["counts"]
    assert a > 10**8 and abs(a - b) / a < 0.02  # the same code and work: the same count, up to a little noise
    assert rows[0]["compiled"] == rows[1]["compiled"] == 0  # the warm-up edit compiled its new jobs
    assert {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} == before
    text = bench_edit_instructions.table(rows, root)
    assert text.count("| 1 |") == 2 and "1.000x" in text
