"""The bench's figure 18: the whole-world cook after a one-file edit and the no-op after it, as whole processes."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from paths import REPO

sys.path.insert(0, str(REPO / "bench"))

import bench_world_edit  # noqa: E402
import suite  # noqa: E402
import worldgen  # noqa: E402

from pipeline import api  # noqa: E402


@pytest.mark.slow
def test_world_edit_figure_times_the_cooks_and_leaves_the_world_as_it_was(tmp_path: Path) -> None:
    spec = worldgen.WorldSpec(chunks=2, files_per_chunk=3, props=6)
    root = tmp_path / "world"
    worldgen.generate(root, spec)
    before = {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    library = {"rules": REPO / "rules", "materials": REPO / "materials"}
    run = SimpleNamespace(spec=spec, root=root, cache=tmp_path / "cache", out=tmp_path / "out", files=spec.files)
    assert api.cook(api.open_world(root, **library), cache=run.cache, out=run.out, jobs=2).ok
    results = suite.Results({})
    bench_world_edit.figure_world_edit(run, library, 1, 2, results, suite.Figure, log=lambda line: None)
    edit, noop = results.figures
    assert (edit.number, noop.number) == (18, 18) and edit.value > 0 and noop.value > 0
    assert "stat walk" in edit.baseline and "--chunk" in edit.note and noop.ratio > 0
    assert {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} == before
