"""The benchmark suite still runs end to end on a tiny world (no timing is checked)."""

from __future__ import annotations

import sys

import pytest
from paths import REPO

BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

suite = pytest.importorskip("suite")
worldgen = pytest.importorskip("worldgen")

TINY = suite.Config(sizes=((1, 4), (2, 4)), props=6, runs=1, cold_runs=1, compile_jobs=2, scan_quick=True)


def test_worldgen_is_deterministic(tmp_path):
    spec = worldgen.WorldSpec(chunks=2, files_per_chunk=3, props=5)
    first = worldgen.generate(tmp_path / "a", spec)
    second = worldgen.generate(tmp_path / "b", spec)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.gl*"))
    assert first == second and len(files) == 6
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)


def test_worldgen_command_spreads_the_chunks_over_the_levels_asked_for(tmp_path, capsys):
    worldgen.main([str(tmp_path / "one"), "--chunks", "3", "--files", "2", "--props", "4", "--levels", "1"])
    worldgen.main([str(tmp_path / "two"), "--chunks", "3", "--files", "2", "--props", "4", "--levels", "2"])
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == ["l0"]
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["l0", "l1"]
    with pytest.raises(SystemExit):
        worldgen.main([str(tmp_path / "none"), "--levels", "0"])
    assert "--levels must be at least 1" in capsys.readouterr().err


def test_cpu_per_added_file_leaves_the_compiles_and_the_constant_out():
    # 2 s of start-up and 3 s of compiles at every size, then 0.5 ms a file, and 0.75 ms from 3k files on
    rows = [{"files": 1000, "cpu": 5.5, "compile_cpu": 3.0}, {"files": 3000, "cpu": 6.5, "compile_cpu": 3.0},
            {"files": 10000, "cpu": 11.75, "compile_cpu": 3.0}]
    steps = suite.cpu_per_added_file(rows)
    assert [(a, b) for a, b, _ in steps] == [(1000, 3000), (3000, 10000)]
    assert [round(per * 1e3, 6) for _, _, per in steps] == [0.5, 0.75]


@pytest.mark.slow
def test_quick_suite_writes_results_table(tmp_path):
    pytest.importorskip("matplotlib", reason="the scaling plot needs the [bench] extra (matplotlib)")
    out, plot = tmp_path / "RESULTS.md", tmp_path / "scaling.svg"
    results = suite.run_all(TINY, tmp_path / "work", out, plot, quick=True, log=lambda line: None,
                            figures=("validcount", "worlds"))
    text = out.read_text()
    header = "| # | figure | value | baseline | ratio | target | met? | note |"
    assert header in text and "## Scaling (figure 8)" in text
    table = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    rows = [line for line in table if line.startswith("| ")]
    assert sorted({int(r.split("|")[1]) for r in rows}) == [2, 3, 4, 6, 7, 8, 17]
    assert "## Outputs (figure 17)" in text
    assert all(len(r.split("|")) == len(header.split("|")) for r in rows)
    assert [s["files"] for s in results.scaling] == [4, 8]
    assert plot.read_text().lstrip().startswith("<?xml")


def test_preprocess_bench_writes_its_table(tmp_path, monkeypatch):
    bench = pytest.importorskip("bench_preprocess")
    sample = REPO / "examples" / "sample_world"
    out = tmp_path / "PREPROCESS.md"
    monkeypatch.setattr(sys, "argv", ["bench_preprocess.py", "--runs", "1", "--corpus", str(sample), "--out", str(out)])
    assert bench.main() == 0
    rows = [line for line in out.read_text().splitlines() if line.startswith("| pbr") or line.startswith("| legacy")]
    assert [r.split(" | ")[0] for r in rows] == ["| pbr (vulkan1.2)", "| legacy (opengl4.5)", "| legacy (vulkan1.2)",
                                                 "| legacy (webgl2)"]
    assert all(float(r.rstrip(" |").rsplit("| ", 1)[1]) > 0 for r in rows)


def test_reflection_bench_writes_its_table(tmp_path, monkeypatch):
    import shutil

    from pipeline.compilers import spirv_cross_capi

    if shutil.which("spirv-cross") is None or spirv_cross_capi.load() is None:
        pytest.skip("SPIRV-Cross's command and library (Debian spirv-cross, libspirv-cross-c-shared0) are compared")
    bench = pytest.importorskip("bench_reflection")
    out = tmp_path / "REFLECTION.md"
    monkeypatch.setattr(sys, "argv", ["bench_reflection.py", "--runs", "1", "--out", str(out)])
    bench.main()
    assert spirv_cross_capi.load() is not None  # the bench put the library back
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.read_text().splitlines()
            if line.startswith("| command ") or line.startswith("| library ")]
    assert [(way, how) for way, how, *_ in rows] == [("command", "serial"), ("library", "serial"),
                                                     ("command", "prefetch"), ("library", "prefetch")]
    assert all(cell.endswith(" ms") and float(cell[:-3]) > 0 for *_, wall, cpu, per in rows for cell in (wall, cpu, per))
