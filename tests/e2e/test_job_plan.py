"""One job plan for cook, report and verify; the report reads what the cook recorded and keeps its
no-op stamp; ``pipeline cook --dry-run`` changes nothing and says what a cook would do."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.builtin import builtin_rules_dir
from pipeline.cache.job_records import JOB_EXACT
from pipeline.cache.store import Store
from pipeline.plan import jobs as _jobs
from pipeline.plan.setup import plan_jobs
from pipeline.cook.verify import VerifyOptions, family_keys, family_setup, plan_family
from pipeline.progress import NullProgress
from pipeline.rules.load import load_rulesets
from startup_helpers import heavy_loaded, pipeline, probe_run
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
FIGURES = ("families", "totals", "levels", "chunks", "keys", "features")


def listing(*folders: Path) -> dict[str, tuple]:
    """Every file and folder under ``folders`` with its stat (what a read-only look must leave alone)."""
    out = {}
    for folder in folders:
        if not folder.exists():
            out[str(folder)] = None
            continue
        for path in sorted([folder, *folder.rglob("*")]):
            st = path.stat()
            out[str(path)] = (st.st_mtime_ns, st.st_size, st.st_ino) if path.is_file() else ()
    return out


# ------------------------------------------------------------------ one plan
@pytest.mark.slow
def test_report_reads_a_shader_library_reaching_into_an_allowed_root(tmp_path: Path) -> None:
    materials, shared = tmp_path / "materials", tmp_path / "shared"
    shutil.copytree(ROOT / "materials", materials)
    shared.mkdir()
    shutil.move(materials / "pbr" / "pbr.frag", shared / "pbr.frag")
    (materials / "pbr" / "pbr.frag").symlink_to(shared / "pbr.frag")
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    (world / "pipeline.toml").write_text(f'materials = "{materials}"\nallowed_roots = ["{shared}"]\n')
    cook = pipeline("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                    "--json", cwd=tmp_path)
    assert cook.returncode == 0, cook.stderr
    report = pipeline("report", world, "--cache", tmp_path / "cache", "--format", "json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "allowed roots" not in report.stderr
    doc = json.loads(report.stdout)
    total = next(r for r in doc["totals"] if r["shader"] == "pbr")
    assert total["unique_sources"] == total["cached"] > 0 and total["missing"] == 0 and total["pso"]


def test_verify_plans_the_jobs_a_cook_plans(tmp_path: Path) -> None:
    pbr = next(rs for rs in load_rulesets(builtin_rules_dir()) if rs.shader == "pbr")
    options = VerifyOptions(sample=6, seed=3)
    setup = family_setup(api.open_world(tmp_path, materials=ROOT / "materials"), pbr, options, identity="test")
    verified = plan_family(pbr, setup, options, NullProgress())
    keys = [k for p in sorted(pbr.compiled.passes) for k in family_keys(pbr, p, options.sample, options.seed)]
    cooked = plan_jobs(setup, keys)
    assert cooked.exact and set(verified.jobs.jobs) == set(cooked.jobs)
    assert sum(verified.users.values()) == cooked.stage_uses


# ------------------------------------------------------------------ the report reads the cook's records
@pytest.fixture(scope="module")
def cooked(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("cooked")
    api.cook(SAMPLE, cache=tmp / "cache", out=tmp / "out", jobs=2)
    return tmp, tmp / "cache"


def _figures(cache: Path) -> dict:
    doc = api.report(SAMPLE, cache=cache, explain_keys=0).to_json()
    return {name: doc[name] for name in FIGURES}


def test_report_figures_come_from_the_records_without_preprocessing(cooked, monkeypatch, tmp_path) -> None:
    tmp, cache = cooked
    with Store(cache, read_only=True) as store:
        assert store.keys(JOB_EXACT)  # the cook recorded the exact key of every job it preprocessed
    unrecorded = tmp_path / "unrecorded"
    shutil.copytree(cache, unrecorded)
    with Store(unrecorded) as store:
        for key in store.keys(JOB_EXACT):
            store.delete(JOB_EXACT, key)
    planned_again = _figures(unrecorded)  # every job preprocessed again, as a report without records does

    def refuse(tree):
        raise AssertionError("a job the cook recorded was preprocessed again")

    monkeypatch.setattr(_jobs, "default_preprocessor", refuse)
    from_records = _figures(cache)
    assert from_records == planned_again
    pbr = {r["pass"]: r for r in from_records["families"] if r["shader"] == "pbr"}
    assert all(r["unique_binaries"] and r["pso"] and r["missing"] == 0 for r in pbr.values())
    monkeypatch.undo()
    empty = _figures(tmp_path / "empty")
    for name in ("families", "totals"):  # no cache: the same jobs, no binary figures
        assert [(r["shader"], r["pass"], r["required"], r["unique_sources"]) for r in empty[name]] == \
               [(r["shader"], r["pass"], r["required"], r["unique_sources"]) for r in from_records[name]]
        assert all(r["unique_binaries"] is None for r in empty[name])
    assert not (tmp_path / "empty").exists()  # a report creates no cache


def test_a_report_leaves_the_cache_as_it_was(cooked) -> None:
    tmp, cache = cooked
    before = listing(cache)
    api.report(SAMPLE, cache=cache, explain_keys=3)
    assert listing(cache) == before


@pytest.mark.slow
def test_a_report_between_two_cooks_keeps_the_noop_stamp(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    args = ["cook", str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")]
    assert probe_run(args, tmp_path, tmp_path / "m.json").returncode == 0  # the cook leaves its no-op's stamp
    assert heavy_loaded(tmp_path / "m.json")
    report = pipeline("report", world, "--cache", tmp_path / "cache", "--format", "json", "-o", tmp_path / "r.json",
                      cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    again = probe_run(args, tmp_path, tmp_path / "m.json")
    assert again.returncode == 0 and "0 compiled" in again.stdout
    assert heavy_loaded(tmp_path / "m.json") == []  # answered from the stamp


# ------------------------------------------------------------------ dry run
@pytest.mark.slow
def test_dry_run_changes_nothing_and_lists_what_the_cook_then_does(tmp_path: Path) -> None:
    world, materials = tmp_path / "world", tmp_path / "materials"
    shutil.copytree(SAMPLE, world)
    shutil.copytree(ROOT / "materials", materials)
    with (world / "pipeline.toml").open("a") as f:
        f.write(f'materials = "{materials}"\n')
    cache, out = tmp_path / "cache", tmp_path / "out"
    common = [world, "--cache", cache, "--out", out, "-j", "1"]

    fresh = pipeline("cook", *common, "--dry-run", "--json", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    planned = json.loads(fresh.stdout)
    assert not cache.exists() and not out.exists()
    text = pipeline("cook", *common, "-n", cwd=tmp_path)
    assert text.returncode == 0 and not cache.exists() and not out.exists()
    assert text.stdout.count("would compile ") == len(planned["compile"]) == planned["jobs"] > 0
    assert f"{planned['jobs']} to compile, 0 cached" in text.stdout.splitlines()[-1]

    first = json.loads(pipeline("cook", *common, "--json", cwd=tmp_path).stdout)
    assert sorted(j["job"] for j in planned["compile"]) == sorted(j["job"] for j in first["explain"])
    assert sorted(w["path"] for w in planned["write"]) == sorted(first["written"])

    before = listing(cache, out)
    after_cook = json.loads(pipeline("cook", *common, "-n", "--json", cwd=tmp_path).stdout)
    assert (after_cook["compile"], after_cook["write"], after_cook["remove"]) == ([], [], [])
    assert after_cook["cached"] == after_cook["jobs"] == first["jobs"]
    assert listing(cache, out) == before

    with (materials / "pbr" / "lights.glsl").open("a") as f:
        f.write("\nfloat unusedDryRunProbe() { return 1.0; }\n")
    edited = json.loads(pipeline("cook", *common, "--dry-run", "--json", cwd=tmp_path).stdout)
    assert listing(cache, out) == before
    real = json.loads(pipeline("cook", *common, "--json", cwd=tmp_path).stdout)
    assert real["compiled"] > 0
    assert sorted((j["job"], j["reason"]) for j in edited["compile"]) == \
           sorted((j["job"], j["reason"]) for j in real["explain"])
    assert all(j["reason"] == "source changed: pbr/lights.glsl" for j in edited["compile"])


def test_dry_run_reports_bad_input_located_and_removed_chunks(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    common = [world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-j", "1", "-q"]
    assert pipeline("cook", *common, cwd=tmp_path).returncode == 0
    shutil.rmtree(world / "forest" / "c03")
    victim = next((world / "town").rglob("*.gltf"))
    victim.write_text("{")
    before = listing(tmp_path / "cache", tmp_path / "out")
    dry = pipeline("cook", *common[:-1], "--dry-run", cwd=tmp_path)
    assert dry.returncode == 1
    assert f"{victim.relative_to(tmp_path)}:" in dry.stderr and "error:" in dry.stderr
    assert "would remove out/forest/c03.json" in dry.stdout
    assert listing(tmp_path / "cache", tmp_path / "out") == before


def test_a_dry_run_names_a_remembered_compile_error_as_the_cook_does(tmp_path: Path) -> None:
    """A failed job remembered in the cache is grouped the same way by the dry run and the cook:
    the same lines, the same keys broken (key texts, not their characters)."""
    shutil.copytree(SAMPLE, tmp_path / "world")
    shutil.copytree(ROOT / "materials", tmp_path / "shaders")
    (tmp_path / "world" / "pipeline.toml").write_text('level_depth = 1\nmaterials = "../shaders"\n')
    common = tmp_path / "shaders" / "pbr" / "common.glsl"
    common.write_text(common.read_text().replace("return x * x; }", "return x * x }", 1))
    args = [tmp_path / "world", "--cache", tmp_path / "cache", "--out", tmp_path / "out", "--json"]
    cook = pipeline("cook", *args, "-j", "1", cwd=tmp_path)
    dry = pipeline("cook", *args, "--dry-run", cwd=tmp_path)
    assert cook.returncode == dry.returncode == 1
    cooked_errors, dry_errors = json.loads(cook.stdout)["errors"], json.loads(dry.stdout)["errors"]
    assert cooked_errors and dry_errors == cooked_errors
    assert all(key.startswith("pbr/") for e in dry_errors for key in e["keys"])


@pytest.mark.slow
@pytest.mark.parametrize("as_json", [False, True])
def test_the_first_noop_after_a_cook_that_compiled_is_answered_from_its_stamp(tmp_path: Path, as_json) -> None:
    """A cook that compiles and writes leaves the stamp of the no-op that follows it: the next identical
    cook is answered by file stats alone and prints what a full no-op prints."""
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    args = ["cook", str(world), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")]
    args += ["--json"] if as_json else []
    first = probe_run(args, tmp_path, tmp_path / "m.json")
    assert first.returncode == 0
    fast = probe_run(args, tmp_path, tmp_path / "m.json")
    assert heavy_loaded(tmp_path / "m.json") == []  # answered from the stamp the compiling cook left
    shutil.rmtree(tmp_path / "cache" / "noop-stamps")
    full = probe_run(args, tmp_path, tmp_path / "m.json")
    assert heavy_loaded(tmp_path / "m.json")  # the full path, for comparison
    assert (fast.returncode, fast.stderr) == (full.returncode, "") == (0, "")
    assert all(re.fullmatch(r"[a-z ]+: \d+/\d+", line) for line in full.stderr.splitlines())  # progress alone
    if as_json:
        shown = [{k: v for k, v in json.loads(run.stdout).items() if k != "duration"} for run in (fast, full)]
        assert shown[0] == shown[1] and shown[0]["compiled"] == 0 and shown[0]["cache_hits"] == shown[0]["jobs"]
    else:
        assert fast.stdout == full.stdout and "0 compiled" in fast.stdout


# ------------------------------------------------------------------ define-based jobs across processes
def test_a_cook_in_a_new_process_reads_the_define_based_jobs_the_first_recorded(tmp_path: Path, monkeypatch) -> None:
    from pipeline.plan import defined
    from pipeline.plan.defined_records import JOB_DEFINED

    defined.forget()
    first = api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "a", jobs=2)
    assert first.ok and first.run.compiled
    with Store(tmp_path / "cache") as store:
        recorded = len(store.keys(JOB_DEFINED))
    ubershader = {k for k in first.plan.stages if api.open_world(SAMPLE).families[k.shader].kind == "ubershader"}
    assert recorded == len(ubershader) > 0
    defined.forget()  # as a new process finds it
    made: list = []
    real = _jobs.make_job
    monkeypatch.setattr(_jobs, "make_job", lambda *a, **k: made.append(a[0].file) or real(*a, **k))
    second = api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "b", jobs=2)
    assert second.ok and not second.run.compiled and made == []
    assert second.plan.jobs == first.plan.jobs and second.plan.stages == first.plan.stages
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
