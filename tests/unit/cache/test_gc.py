"""``pipeline cache stats|gc`` on the local cache: last use is recorded per cook, gc keeps what recent cooks used."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cache import gc, use_records
from pipeline.cache.store import Store
from pipeline.cli.cache import command as cache_command
from pipeline.compile.scheduler import JobRunner
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"


def make_site(tmp_path: Path) -> tuple[Path, Path]:
    world, lib = tmp_path / "world", tmp_path / "materials"
    shutil.copytree(SAMPLE, world)
    shutil.copytree(MATERIALS, lib)
    (world / "pipeline.toml").write_text(f'materials = "{lib}"\n')
    return world, lib


def cook(world: Path, tmp_path: Path) -> tuple[api.CookResult, JobRunner]:
    compiler = JobRunner(api.open_world(world).materials_dir, "capi", 2)
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=2, compiler=compiler,
                      scheduler="none")
    return result, compiler


@pytest.mark.slow
def test_gc_removes_only_what_no_recent_cook_used(tmp_path: Path) -> None:
    world, lib = make_site(tmp_path)
    old, _ = cook(world, tmp_path)
    brdf = lib / "pbr" / "brdf.glsl"  # every fragment job reads it: a shader change
    brdf.write_text(brdf.read_text() + "\n// tweak\n")
    new, _ = cook(world, tmp_path)
    only_old = set(old.plan.jobs) - set(new.plan.jobs)
    assert only_old and set(new.run.compiled) == set(new.plan.jobs) - set(old.plan.jobs)
    with Store(tmp_path / "cache") as store:
        before = gc.stats(store)
        assert (before.jobs, before.uses) == (len(set(old.plan.jobs) | set(new.plan.jobs)), 2)
        old_set = use_records.use_set_id(old.plan.jobs)
        store.set(use_records.USE_TIME, old_set, {"time": time.time() - 40 * 86400})  # used 40 days ago
    report = api.cache_gc(keep_days=30, cache=tmp_path / "cache", world=world)
    assert report.local.jobs_removed == len(only_old) and report.local.uses_removed == 1
    assert report.local.jobs_kept == len(new.plan.jobs) and report.remote is None
    old_blobs = {r.blob for k, r in old.run.results.items() if k in only_old}
    new_blobs = {r.blob for r in new.run.results.values()}
    assert report.local.blobs_removed == len(old_blobs - new_blobs)
    again, compiler = cook(world, tmp_path)  # what the current content needs survived
    assert compiler.calls == 0 and again.errors == []
    brdf.write_text(brdf.read_text().removesuffix("\n// tweak\n"))
    back, compiler = cook(world, tmp_path)  # the removed results compile again
    assert sorted(back.run.compiled) == sorted(only_old) and compiler.calls == len(only_old)


def test_cache_cli_stats_and_gc(tmp_path: Path) -> None:
    world, _ = make_site(tmp_path)
    result, _ = cook(world, tmp_path)
    runner = CliRunner()
    stats = runner.invoke(cache_command, ["stats", "--cache", str(tmp_path / "cache"), "--world", str(world),
                                          "--json"])
    assert stats.exit_code == 0, stats.output
    doc = orjson.loads(stats.output)
    assert doc["local"]["jobs"] == len(result.plan.jobs) and doc["local"]["uses"] == 1 and doc["remote"] is None
    text = runner.invoke(cache_command, ["stats", "--cache", str(tmp_path / "cache"), "--world", str(world)])
    assert f"{len(result.plan.jobs)} jobs" in text.output
    kept = runner.invoke(cache_command, ["gc", "--cache", str(tmp_path / "cache"), "--world", str(world)])
    assert kept.exit_code == 0 and "removed 0 jobs" in kept.output
    gone = runner.invoke(cache_command, ["gc", "--keep-days", "0", "--cache", str(tmp_path / "cache"),
                                         "--world", str(world), "--json"])
    assert orjson.loads(gone.output)["local"]["jobs_removed"] == len(result.plan.jobs)
