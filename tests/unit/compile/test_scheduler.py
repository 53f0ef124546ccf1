"""The scheduler: look each job up in the store, say why a miss runs, compile the misses, store the results."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cache.job_records import JOB
from pipeline.cache.store import CacheWarning, Store
from pipeline.compile import scheduler
from pipeline.compile.scheduler import JobResult, JobRunner, look_up, run_plan, why
from pipeline.compilers import CompileOutput, CompileRequest, SourceTree, get_backend
from pipeline.errors import Diagnostic, Location, canonical_folder
from pipeline.plan.jobs import JobOptions, JobPlan, StageJob, job_key
from pipeline.structs import replace
from paths import DATA
from recorders import ProgressRecorder as Recorder

LIBRARY = DATA / "glsl"
SOURCE = "broken/top_error.frag"  # compiles, except with BROKEN defined


def make_job(defines=(), optimize: bool = False, source: str = SOURCE, stage: str = "fragment") -> StageJob:
    request = CompileRequest(source, stage, defines=tuple(defines), optimize=optimize)
    closure = SourceTree(LIBRARY).closure(source)
    options = JobOptions(optimize=optimize, compiler=get_backend("capi").identity)
    return StageJob(request, closure, options, job_key(request, closure, options))


def plan_of(*jobs: StageJob) -> JobPlan:
    return JobPlan(jobs={job.key: job for job in jobs})


class CountingRunner(JobRunner):
    """The real compiler, counting which job keys it compiled."""

    def __init__(self, jobs: int = 1):
        super().__init__(LIBRARY, "capi", jobs)
        self.compiled: list[str] = []

    def _batch(self, jobs):
        self.compiled += [job.key for job in jobs]
        return super()._batch(jobs)


GOOD, BAD = make_job(), make_job([("BROKEN", "1")])


@pytest.fixture()
def store(tmp_path: Path):
    with Store(tmp_path / "cache") as s:
        yield s


def test_an_empty_store_misses_every_job_in_key_order_and_says_why(store: Store) -> None:
    run, misses = look_up(plan_of(GOOD, BAD).jobs, store, canonical_folder(LIBRARY))
    assert [job.key for job in misses] == sorted([GOOD.key, BAD.key])
    assert run.results == {} and set(run.reasons) == {GOOD.key, BAD.key}
    assert set(run.reasons.values()) == {"new: this source and define set were never compiled"}


def test_misses_compile_once_and_a_second_run_hits_every_job_failures_included(store: Store) -> None:
    runner = CountingRunner()
    first = run_plan(plan_of(GOOD, BAD), store, runner)
    assert sorted(runner.compiled) == sorted(first.compiled) == sorted([GOOD.key, BAD.key]) and runner.calls == 2
    assert first.results[GOOD.key].ok and not first.results[BAD.key].ok
    assert store.get_blob(first.results[GOOD.key].blob)[:4] == b"\x03\x02\x23\x07"  # SPIR-V, little-endian
    (error,) = first.results[BAD.key].diagnostics
    assert (error.file, error.line) == (canonical_folder(LIBRARY) + SOURCE, 6) and "notDefinedHere" in error.message
    again = run_plan(plan_of(GOOD, BAD), store, runner)
    assert runner.calls == 2 and again.compiled == [] and again.cache_hits == 2 and again.reasons == {}
    assert again.results[BAD.key].diagnostics == (error,)  # the remembered error, reported again
    assert again.results[GOOD.key].blob == first.results[GOOD.key].blob


def test_a_lost_blob_recompiles_saying_the_entry_is_missing(store: Store) -> None:
    first = run_plan(plan_of(GOOD), store, CountingRunner())
    store.delete_blob(first.results[GOOD.key].blob)
    runner = CountingRunner()
    again = run_plan(plan_of(GOOD), store, runner)
    assert runner.compiled == [GOOD.key] and again.reasons == {GOOD.key: "cache entry missing or unreadable"}
    store.delete(JOB, GOOD.key)  # the record gone too: only the identity remembers the job
    assert why(GOOD, store) == "cache entry missing"


def test_a_corrupt_blob_recompiles_but_one_the_library_holds_is_only_looked_up(store: Store, monkeypatch) -> None:
    """A cached blob is read and hash-checked, unless the output library holds it (the outputs take it from
    there): then only its entry is looked up, and a lost one still recompiles."""
    blob = run_plan(plan_of(GOOD), store, CountingRunner()).results[GOOD.key].blob
    store._cache.set(f"blob:{blob}", b"not the blob")  # corrupt in place
    reads = []
    real = store.get_blob
    monkeypatch.setattr(store, "get_blob", lambda digest: reads.append(digest) or real(digest))
    run, misses = look_up(plan_of(GOOD).jobs, store, "", held=frozenset({blob}))
    assert misses == [] and run.results[GOOD.key].blob == blob and reads == []
    with pytest.warns(CacheWarning, match="is corrupt; dropping it"):
        run, misses = look_up(plan_of(GOOD).jobs, store, "")
    assert [m.key for m in misses] == [GOOD.key] and reads == [blob]  # read, found corrupt, dropped
    run, misses = look_up(plan_of(GOOD).jobs, store, "", held=frozenset({blob}))
    assert [m.key for m in misses] == [GOOD.key]  # the entry is gone: held or not, it compiles


def test_the_held_blobs_of_many_jobs_are_looked_up_together(store: Store, monkeypatch) -> None:
    """One presence query for every held blob of the plan; a held blob whose entry is gone still compiles."""
    jobs = [make_job(), make_job(source="mesh/mesh.frag"), make_job(source="mesh/mesh.vert", stage="vertex")]
    plan = plan_of(*jobs)
    blobs = {key: r.blob for key, r in run_plan(plan, store, CountingRunner()).results.items()}
    assert len(set(blobs.values())) == len(jobs)
    asked = []
    real = store.blobs_stored
    monkeypatch.setattr(store, "blobs_stored", lambda digests: asked.append(set(digests)) or real(digests))
    monkeypatch.setattr(store, "get_blob", lambda digest: pytest.fail("a held blob was read"))
    gone = jobs[0].key
    store.delete_blob(blobs[gone])
    run, misses = look_up(plan.jobs, store, "", held=frozenset(blobs.values()))
    assert asked == [set(blobs.values())]
    assert [m.key for m in misses] == [gone] and {k: r.blob for k, r in run.results.items()} == \
        {k: b for k, b in blobs.items() if k != gone}


@pytest.mark.parametrize("record", [{"blob": None, "diagnostics": []}, {"blob": 42, "diagnostics": "nope"},
                                    {"diagnostics": [{"line": 1}]}, ["not", "a", "record"]])
def test_a_record_that_says_nothing_usable_is_a_miss(store: Store, record) -> None:
    run_plan(plan_of(GOOD), store, CountingRunner())
    store.set(JOB, GOOD.key, record)
    run, misses = look_up(plan_of(GOOD).jobs, store, "")
    assert misses == [GOOD] and run.reasons[GOOD.key] == "cache entry missing or unreadable"


def test_other_flags_are_the_reason_a_known_job_runs(store: Store) -> None:
    run_plan(plan_of(GOOD), store, CountingRunner())
    optimized = make_job(optimize=True)
    assert optimized.identity == GOOD.identity and optimized.key != GOOD.key
    assert why(optimized, store) == "flags changed (target or optimize)"
    run = run_plan(plan_of(optimized), store, CountingRunner())
    assert run.reasons == {optimized.key: "flags changed (target or optimize)"} and run.results[optimized.key].ok


def test_an_edited_include_is_named_as_the_reason(tmp_path: Path, store: Store) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "tint.glsl").write_text("const float TINT = 0.5;\n")
    (lib / "a.frag").write_text('#version 450\n#include "tint.glsl"\nlayout(location = 0) out vec4 c;\n'
                                "void main() { c = vec4(TINT); }\n")

    def job() -> StageJob:
        request, closure = CompileRequest("a.frag", "fragment"), SourceTree(lib).closure("a.frag")
        return StageJob(request, closure, JobOptions(), job_key(request, closure, JobOptions()))

    run_plan(plan_of(job()), store, JobRunner(lib, "capi", 1))
    (lib / "tint.glsl").write_text("const float TINT = 0.25;\n")
    assert why(job(), store) == "source changed: tint.glsl"


def test_a_record_keeps_library_files_relative_and_reads_them_under_the_new_library() -> None:
    inside = Diagnostic(Location("/old/materials/pbr/a.glsl", 3, 1), "a warning", "warning")
    outside = Diagnostic(Location("/elsewhere/b.glsl", 1), "another")
    record = JobResult("ab" * 32, (inside, outside)).to_record("/old/materials/")
    assert [(d["file"], d.get("in_materials")) for d in record["diagnostics"]] == \
        [("pbr/a.glsl", True), ("/elsewhere/b.glsl", None)]
    back = JobResult.from_record(record, "/new/shaders/")
    assert back.cached and back.blob == "ab" * 32
    assert [d.file for d in back.diagnostics] == ["/new/shaders/pbr/a.glsl", "/elsewhere/b.glsl"]
    assert back.diagnostics[0].location.line == 3 and back.diagnostics[1].severity == "error"


def test_progress_counts_the_misses_only(store: Store) -> None:
    run_plan(plan_of(GOOD), store, CountingRunner())
    seen = Recorder()
    run_plan(plan_of(GOOD, BAD), store, CountingRunner(), progress=seen)
    assert seen.calls == [("start", "compiling", 1), ("advance", 1), ("finish",)]
    quiet = Recorder()
    run_plan(plan_of(GOOD, BAD), store, CountingRunner(), progress=quiet)
    assert quiet.calls == []  # nothing to compile: no phase


class FakeTier:
    """A shared tier that holds the given outputs and records what the cook hands back."""

    def __init__(self, holds: dict[str, CompileOutput]):
        self.holds, self.asked, self.given, self.finished = holds, [], [], 0

    def fetch(self, jobs):
        self.asked += [job.key for job in jobs]
        return {job.key: self.holds[job.key] for job in jobs if job.key in self.holds}

    def compiled(self, job, output):
        self.given.append(job.key)

    def finish(self):
        self.finished += 1


def test_a_shared_tier_serves_blobs_but_never_failures(store: Store) -> None:
    other = make_job([("X", "1")])
    blob = CountingRunner()._batch([GOOD])[0].spirv
    failure = CompileOutput(None, (Diagnostic(Location("elsewhere.frag", 1), "their error"),))
    tier = FakeTier({GOOD.key: CompileOutput(blob), BAD.key: failure})
    runner = CountingRunner()
    run = run_plan(plan_of(GOOD, BAD, other), store, runner, remote=tier)
    assert sorted(tier.asked) == sorted([GOOD.key, BAD.key, other.key])
    assert run.fetched == [GOOD.key] and run.results[GOOD.key].cached and store.get_blob(run.results[GOOD.key].blob)
    assert sorted(runner.compiled) == sorted(run.compiled) == sorted([BAD.key, other.key]) == sorted(tier.given)
    assert "their error" not in str(run.results[BAD.key].diagnostics)  # this machine's own failure
    assert GOOD.key not in run.reasons and tier.finished == 1
    again = FakeTier({})
    run_plan(plan_of(GOOD, BAD, other), store, CountingRunner(), remote=again)
    assert again.asked == [] and again.finished == 1  # every job a local hit: the tier is not asked


def test_fail_fast_cancels_the_jobs_after_the_first_failure(store: Store) -> None:
    jobs = sorted([GOOD, BAD, make_job([("X", "1")]), make_job([("X", "2")])], key=lambda j: j.key)
    runner = CountingRunner()
    run = run_plan(plan_of(*jobs), store, runner, fail_fast=True)
    first_bad = [j.key for j in jobs].index(BAD.key)
    assert runner.compiled == [j.key for j in jobs[:first_bad + 1]]
    assert run.cancelled == [j.key for j in jobs[first_bad + 1:]]
    assert all(store.get(JOB, key) is None for key in run.cancelled)


def test_the_process_pool_gives_the_bytes_compiling_here_gives(tmp_path: Path, monkeypatch) -> None:
    jobs = [GOOD, BAD, make_job([("X", "1")]), make_job(source="mesh/mesh.vert", stage="vertex")]
    with Store(tmp_path / "here") as here:
        inline = run_plan(plan_of(*jobs), here, JobRunner(LIBRARY, "capi", 1))
        blobs = {key: here.get_blob(r.blob) if r.blob else None for key, r in inline.results.items()}
    monkeypatch.setattr(scheduler, "INLINE_PER_WORKER", 0)  # four jobs, two workers: the pool runs them
    runner = JobRunner(LIBRARY, "capi", 2)
    with Store(tmp_path / "pool") as pool:
        pooled = run_plan(plan_of(*jobs), pool, runner)
        assert {key: pool.get_blob(r.blob) if r.blob else None for key, r in pooled.results.items()} == blobs
    assert runner.calls == 4 and sorted(pooled.compiled) == sorted(inline.compiled)
    assert pooled.results[BAD.key].diagnostics == inline.results[BAD.key].diagnostics


def test_a_batch_of_results_from_the_pool_is_recorded_in_one_commit(tmp_path: Path, monkeypatch) -> None:
    jobs = [BAD, *(make_job([("X", str(i))]) for i in range(23))]
    monkeypatch.setattr(scheduler, "INLINE_PER_WORKER", 0)
    with Store(tmp_path / "pool") as store:
        commits, real = [], store._cache.transact
        monkeypatch.setattr(store._cache, "transact", lambda *a, **k: commits.append(1) or real(*a, **k))
        run = run_plan(plan_of(*jobs), store, JobRunner(LIBRARY, "capi", 2))
        assert sorted(run.compiled) == sorted(j.key for j in jobs)
        assert 1 <= len(commits) < len(jobs)  # one per batch the pool sent back, not one per job
        again = run_plan(plan_of(*jobs), store, JobRunner(LIBRARY, "capi", 2))
        assert again.compiled == [] and again.cache_hits == len(jobs)  # every record was written


def with_plugins(job: StageJob, *plugins: tuple[str, str, str]) -> StageJob:
    request = replace(job.request, plugins=plugins, text=SourceTree(LIBRARY).read(SOURCE))
    return StageJob(request, job.closure, job.options, job_key(request, job.closure, job.options))


def test_a_job_through_plugins_says_which_changed_and_names_them(store: Store) -> None:
    unroll = ("unroll", "1.0", "a" * 64)
    first = with_plugins(GOOD, unroll)
    assert why(first, store) == "new: this source and define set were never compiled; through plug-ins unroll 1.0"
    run_plan(plan_of(first), store, CountingRunner())
    edited = with_plugins(GOOD, ("unroll", "1.0", "b" * 64))
    assert edited.key != first.key and edited.identity == first.identity
    assert why(edited, store) == "plug-in changed: unroll; through plug-ins unroll 1.0"
    assert why(with_plugins(GOOD), store) == "plug-ins changed: now none"
    assert why(with_plugins(GOOD, unroll, ("dxc", "", "c" * 64)), store) == \
        "plug-ins changed: now unroll, dxc; through plug-ins unroll 1.0, dxc"


def test_the_job_records_are_read_together(store: Store, monkeypatch) -> None:
    run_plan(plan_of(GOOD, BAD), store, CountingRunner())
    monkeypatch.setattr(store, "get", lambda *a, **k: pytest.fail("a job record read alone"))
    run, misses = look_up(plan_of(GOOD, BAD).jobs, store, "")
    assert GOOD.key in run.results and run.results[GOOD.key].cached
