"""The farm benchmark runs end to end on the sample world (real LocalClusters; no timing is checked)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO
sys.path.insert(0, str(ROOT / "bench"))

bench_farm = pytest.importorskip("bench_farm")
suite = pytest.importorskip("suite")


@pytest.mark.slow
def test_farm_benchmark_measures_and_projects(tmp_path: Path) -> None:
    for name in ("rules", "materials"):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "examples" / "sample_world", tmp_path / "world")
    original = (tmp_path / "materials" / bench_farm.CHANGED).read_text()
    found = bench_farm.measure(tmp_path / "world", tmp_path / "rules", tmp_path / "materials", tmp_path,
                               log=lambda line: None)
    assert (tmp_path / "materials" / bench_farm.CHANGED).read_text() == original  # the change is undone
    rows = found["rows"]
    assert list(rows) == ["pool", "dask 1 worker", "dask 2 workers"]
    assert rows["dask 1 worker"]["farm"]["workers"] == 1 and rows["dask 2 workers"]["farm"]["workers"] == 2
    assert rows["pool"]["farm"] is None and len({r["jobs"] for r in rows.values()}) == 1
    projected = {(p["workers"], p["jobs"]): p["seconds"] for p in found["projection"]}
    jobs = rows["pool"]["jobs"]
    assert projected[(1, 10_000)] > projected[(8, 10_000)] >= projected[(128, 10_000)] > 0
    assert projected[(1, jobs)] < projected[(1, 10_000)]
    figures = bench_farm.figures(found, suite.Figure)
    assert [f.number for f in figures] == [9, 9, 9] and all(f.value > 0 for f in figures)
    assert 0 < found["check_ms"] < found["client_ms"]  # the client's own checks of each result, then its store write
    text = "\n".join(bench_farm.render(found))
    assert "## Build farm (figure 9)" in text and "| 128 |" in text and "Assumed:" in text


@pytest.mark.slow
def test_farm_benchmark_sets_a_cold_cook_on_a_cluster_against_the_pool(tmp_path: Path) -> None:
    for name in ("rules", "materials"):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "examples" / "sample_world", tmp_path / "world")
    rows = bench_farm.cold_cooks(tmp_path / "world", tmp_path / "rules", tmp_path / "materials", tmp_path,
                                 log=lambda line: None)
    assert list(rows) == ["pool", "dask 2 workers", bench_farm.AT_ADDRESS]
    pool, dask, address = rows["pool"], rows["dask 2 workers"], rows[bench_farm.AT_ADDRESS]
    assert pool["compiled"] == dask["compiled"] == address["compiled"] > 0  # each cook cold: every job compiled
    assert pool["startup_s"] is None and dask["startup_s"] > 0
    # the sample world's few files are scanned here (farm_chunks.FARM_MIN_FILES): no row for the farm's chunks
    assert dask["farm_chunks"] is None and address["farm_chunks"] is None
    (figure,) = bench_farm.cold_figures(rows, 42, suite.Figure)
    assert "cold cook of 42 files" in figure.name and figure.ratio == pool["wall"] / dask["wall"]
    assert figure.met == (dask["wall"] <= pool["wall"])
    assert bench_farm.cold_figures(None, None, suite.Figure) == []


def test_the_farm_at_an_address_row_says_what_a_chunk_costs_a_worker_and_the_cook() -> None:
    pool = {"wall": 8.0}
    row = {"wall": 10.0, "chunks": 100, "farm_chunks": {"done": 100, "wall_s": 3.0, "client_s": 0.25}}
    (figure,) = bench_farm.address_figure(row, pool, 10_000, suite.Figure)
    assert figure.ratio == 0.8 and figure.met is None and figure.target == "report"
    assert "100 of 100 chunks on the workers in 3.00 s (60 ms a chunk on a worker)" in figure.note
    assert "per chunk 2.5 ms" in figure.note and "about 24 workers fed" in figure.note
    assert bench_farm.address_figure(None, pool, 10_000, suite.Figure) == []
