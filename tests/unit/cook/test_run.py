"""Unit tests of the cook's job bookkeeping through the FakeCompiler seam (no glslang).

Each test cooks a copy of the sample world with :class:`fakes.FakeCompiler` and
asserts on what it compiled, job by job.  The same behaviours are tested with the
real compiler in tests/e2e/test_cook_sample_world.py and tests/unit/keys/test_incremental.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fakes import FAKE_ERROR, FakeCompiler, failing, fake_blob

from pipeline import api
from pipeline.cache.job_records import JOB
from pipeline.cache.store import Store
from pipeline.outputs import manifest as mf
from pipeline.outputs.manifest import library_path, load_chunk_manifest
from pipeline.outputs.pak import LIBRARY_NAME, PakReader
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"
FORWARD_FRAGMENT = failing(stage="fragment", define=("PASS_FORWARD", "1"))


@pytest.fixture
def site(tmp_path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "world")
    shutil.copytree(MATERIALS, tmp_path / "materials")
    return tmp_path


def cook(site: Path, compiler: FakeCompiler | None = None, **options):
    compiler = compiler or FakeCompiler(site / "materials")
    world = api.open_world(site / "world", materials=site / "materials")
    return api.cook(world, cache=site / "cache", out=site / "out", jobs=1, compiler=compiler, **options), compiler


def test_no_real_compiler_is_needed(site, monkeypatch) -> None:
    def no_backend(name):
        raise AssertionError(f"backend {name!r} asked for")

    monkeypatch.setattr("pipeline.compilers.backends.get_backend", no_backend)
    monkeypatch.setattr("pipeline.compile.scheduler.get_backend", no_backend)
    result, compiler = cook(site)
    assert result.errors == [] and compiler.calls == len(result.plan.jobs) > 0


def test_cold_cook_compiles_each_job_once_and_stores_its_blob(site) -> None:
    result, compiler = cook(site)
    assert compiler.calls == len(result.plan.jobs) == len(result.run.compiled)
    assert set(compiler.compiled) == set(result.plan.jobs) and set(compiler.compiled.values()) == {1}
    assert compiler.runs == [sorted(result.plan.jobs)]            # one run, in job-key order
    manifest = load_chunk_manifest(site / "out" / "forest" / "c00.json")
    pak = PakReader(library_path(site / "out"))
    digests = {d for e in manifest.keys.values() for d in e.stages.values()}
    job_of = {r.blob: k for k, r in result.run.results.items()}
    assert digests and all(pak.get(d) == fake_blob(job_of[d]) for d in digests)  # each stage: its job's blob


def test_second_cook_has_nothing_left_to_build(site) -> None:
    first, _ = cook(site)
    second, compiler = cook(site)
    assert compiler.calls == 0 and compiler.runs == [] and second.run.compiled == []
    assert second.run.cache_hits == len(first.plan.jobs) and second.written == []
    assert {k: r.blob for k, r in second.run.results.items()} == {k: r.blob for k, r in first.run.results.items()}


def test_edited_chunk_recompiles_exactly_its_new_jobs(site) -> None:
    first, _ = cook(site)
    path = site / "world" / "forest" / "c00" / "terrain.gltf"
    doc = json.loads(path.read_text())
    doc["materials"][0].update(alphaMode="MASK", alphaCutoff=0.4, emissiveTexture={"index": 0})
    path.write_text(json.dumps(doc))
    result, compiler = cook(site)
    new = set(result.plan.jobs) - set(first.plan.jobs)
    assert new and compiler.runs == [sorted(new)] and compiler.calls == len(new)
    assert all(result.run.reasons[k].startswith("new:") for k in new)
    written = {Path(p).relative_to(site / "out").as_posix() for p in result.written}
    assert written == {"forest/c00.json", LIBRARY_NAME, "shaders.chunks", "forest.level.json"}


def test_edited_include_recompiles_exactly_the_jobs_reading_it(site) -> None:
    first, _ = cook(site)
    include = "pbr/brdf.glsl"
    readers = {j.identity for j in first.plan.jobs.values() if include in dict(j.closure)}
    with (site / "materials" / include).open("a") as handle:
        handle.write("\n// tuned\n")
    result, compiler = cook(site)
    # jobs are keyed by preprocessed text: the readers whose text changed recompile, and only they
    # (a job whose closure names the include under a branch it does not take keeps its key)
    recompiled = {result.plan.jobs[k].identity for k in compiler.compiled}
    assert readers and recompiled and recompiled <= readers and compiler.calls == len(recompiled)
    assert set(compiler.compiled) == set(result.plan.jobs) - set(first.plan.jobs)
    assert {result.run.reasons[k] for k in compiler.compiled} == {f"source changed: {include}"}


def test_an_edited_include_recompiles_its_readers_when_the_same_world_cooks_again(site) -> None:
    """A process that cooks one world object twice keeps its keys' define-based jobs between the plans
    (pipeline.plan.defined): an include edited in between still makes the jobs reading it new."""
    from pipeline.plan import defined

    world = api.open_world(site / "world", materials=site / "materials", cache=site / "cache")

    def again(compiler):
        return api.cook(world, cache=site / "cache", out=site / "out", jobs=1, compiler=compiler)

    first = again(FakeCompiler(site / "materials"))
    assert defined._GENERATIONS["pbr"][0] is world.families["pbr"]  # the same rule set: its jobs were kept
    include = "pbr/brdf.glsl"
    with (site / "materials" / include).open("a") as handle:
        handle.write("\n// tuned\n")
    compiler = FakeCompiler(site / "materials")
    result = again(compiler)
    readers = {j.identity for j in first.plan.jobs.values() if include in dict(j.closure)}
    recompiled = {result.plan.jobs[k].identity for k in compiler.compiled}
    assert readers and recompiled and recompiled <= readers
    assert set(compiler.compiled) == set(result.plan.jobs) - set(first.plan.jobs)
    assert {result.run.reasons[k] for k in compiler.compiled} == {f"source changed: {include}"}


def test_failed_job_is_cached_as_a_failure_never_a_success(site) -> None:
    result, compiler = cook(site, FakeCompiler(site / "materials", fail=FORWARD_FRAGMENT))
    failed = set(compiler.failed)
    assert failed == {k for k, j in result.plan.jobs.items() if FORWARD_FRAGMENT(j)} and failed
    assert {k for k, r in result.run.results.items() if not r.ok} == failed
    with Store(site / "cache") as store:
        assert all(store.get(JOB, k)["blob"] is None for k in failed)
    assert result.errors and {(e.file, e.line, e.col) for e in result.errors} == \
        {(f"{(site / 'materials').resolve()}/pbr/pbr.frag", 1, 1)}
    assert all(FAKE_ERROR in e.message and e.key.startswith("pbr/forward{") for e in result.errors)
    c00 = load_chunk_manifest(site / "out" / "forest" / "c00.json")
    assert {t for t, e in c00.keys.items() if "fragment" not in e.stages} == {e["key"] for e in c00.errors}

    again, compiler = cook(site)                              # would succeed now, but the inputs are the same
    assert compiler.calls == 0 and again.errors == result.errors   # the failure is remembered, not turned into a blob


def test_failed_job_is_retried_once_its_inputs_change(site) -> None:
    first, _ = cook(site, FakeCompiler(site / "materials", fail=FORWARD_FRAGMENT))
    failed = {k for k, r in first.run.results.items() if not r.ok}
    with (site / "materials" / "pbr" / "pbr.frag").open("a") as handle:   # "the fix" (code: a comment
        handle.write("\nfloat fixedHelper() { return 1.0; }\n")        # leaves the preprocessed text as is)
    fixed, compiler = cook(site)
    retried = {first.plan.jobs[k].identity for k in failed}
    assert retried <= {fixed.plan.jobs[k].identity for k in compiler.compiled}
    assert fixed.errors == [] and all(r.ok for r in fixed.run.results.values())


def test_fail_fast_cancels_the_rest_and_the_next_cook_runs_only_those(site) -> None:
    fail = failing(stage="fragment")
    result, compiler = cook(site, FakeCompiler(site / "materials", fail=fail), fail_fast=True)
    order = sorted(result.plan.jobs)
    first_failure = next(i for i, k in enumerate(order) if fail(result.plan.jobs[k]))
    assert compiler.runs == [order[:first_failure + 1]] and compiler.failed == [order[first_failure]]
    assert result.run.cancelled == order[first_failure + 1:] and result.run.cancelled
    assert sum(len(e.jobs) for e in result.errors if "--fail-fast" in e.message) == len(result.run.cancelled)
    with Store(site / "cache") as store:                      # cancelled jobs leave no record
        assert all(store.get(JOB, k) is None for k in result.run.cancelled)

    again, compiler = cook(site)                              # the cancelled jobs run now, nothing else
    assert compiler.runs == [result.run.cancelled]
    assert [e for e in again.errors if "--fail-fast" in e.message] == []


def test_without_fail_fast_every_job_runs(site) -> None:
    result, compiler = cook(site, FakeCompiler(site / "materials", fail=failing(stage="fragment")))
    assert compiler.calls == len(result.plan.jobs) and result.run.cancelled == []


def test_a_cook_killed_mid_run_keeps_what_it_finished(site, monkeypatch) -> None:
    class Killed(Exception):
        pass

    class Dying(FakeCompiler):
        def _batch(self, jobs):
            if self.calls == 5:
                raise Killed()
            return super()._batch(jobs)

    with pytest.raises(Killed):
        cook(site, Dying(site / "materials"))
    result, compiler = cook(site)
    assert compiler.calls == len(result.plan.jobs) - 5 and result.run.cache_hits == 5


def test_a_new_compiler_identity_recompiles_everything_and_says_why(site) -> None:
    first, _ = cook(site)

    class Upgraded(FakeCompiler):
        identity = "fake-compiler 2 (tests)"

    result, compiler = cook(site, Upgraded(site / "materials"))
    assert compiler.calls == len(first.plan.jobs) and not set(result.plan.jobs) & set(first.plan.jobs)
    assert set(result.run.reasons.values()) == {f"compiler changed ({FakeCompiler.identity} -> {Upgraded.identity})"}


def test_the_cook_s_document_counts_what_it_did(site) -> None:
    from pipeline.cook.run import CookResult

    first, compiler = cook(site)
    assert isinstance(first, CookResult)
    doc = first.to_json()
    assert (doc["jobs"], doc["compiled"], doc["cache_hits"]) == (len(first.plan.jobs), compiler.calls, 0)
    assert doc["written"] == first.written and doc["errors"] == []
    again = cook(site)[0].to_json()
    assert (again["compiled"], again["cache_hits"], again["written"]) == (0, doc["jobs"], [])


def test_a_chunk_whose_blob_left_the_store_keeps_its_old_index_and_is_written_by_the_next_cook(site, monkeypatch):
    first, _ = cook(site)
    known = {r.blob for r in first.run.results.values() if r.blob}
    fragment = site / "materials" / "pbr" / "pbr.frag"
    fragment.write_text(fragment.read_text() + "\nfloat editedForTheTest() { return 1.0; }\n")
    before = {p: p.read_bytes() for p in (site / "out").rglob("*.json") if not p.name.endswith(".level.json")}
    real = Store.get_blob
    # the blobs compiled now leave the store before the outputs are written (a gc of another machine, say)
    monkeypatch.setattr(Store, "get_blob", lambda self, digest: real(self, digest) if digest in known else None)
    second, _ = cook(site)
    assert any("cook those chunks again" in e.message for e in second.errors)
    library = PakReader(library_path(site / "out"))
    kept = []
    for path, old in before.items():
        index = load_chunk_manifest(path)
        assert mf.stage_hashes(index) <= set(library)  # no index names a blob the library lacks
        if path.read_bytes() == old:
            kept.append(str(path))
    assert kept and not set(kept) & set(second.written)  # the chunks that lost a blob keep their old index
    monkeypatch.setattr(Store, "get_blob", real)
    third, _ = cook(site)
    changed = {str(p) for p, old in before.items() if p.read_bytes() != old}
    # the chunks that kept their old index are written once their blobs are back: their records were not moved on
    assert third.errors == [] and changed and changed <= set(kept) and changed <= set(third.written)
    assert all(mf.stage_hashes(load_chunk_manifest(p)) <= set(PakReader(library_path(site / "out")))
               for p in before)
