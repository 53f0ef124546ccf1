"""Compile job records: the record kinds the scheduler and the job plan keep, and the layout they hold."""

from __future__ import annotations

from pathlib import Path

from pipeline.cache.job_records import JOB, JOB_EXACT, JOB_IDENTITY
from pipeline.cache.store import RecordKind, Store
from pipeline.compile.scheduler import JobRunner, run_plan
from pipeline.compilers import CompileRequest, SourceTree, get_backend
from pipeline.plan.jobs import JobOptions, JobPlan, StageJob, job_key

SHADER = "#version 450\nlayout(location = 0) out vec4 colour;\nvoid main() { colour = vec4(1.0); }\n"


def one_job(folder: Path, text: str = SHADER) -> StageJob:
    folder.mkdir(parents=True)
    (folder / "ok.frag").write_text(text)
    request = CompileRequest("ok.frag", "fragment")
    closure = SourceTree(folder).closure("ok.frag")
    options = JobOptions(compiler=get_backend("capi").identity)
    return StageJob(request, closure, options, job_key(request, closure, options))


def test_the_kinds_and_their_versions() -> None:
    assert (JOB, JOB_IDENTITY, JOB_EXACT) == (RecordKind("job", 2), RecordKind("job-identity", 1),
                                              RecordKind("job-exact", 1))


def test_the_kinds_do_not_see_each_other_s_records(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        for kind in (JOB, JOB_IDENTITY, JOB_EXACT):
            store.set(kind, "same-name", kind.namespace)
        assert [store.keys(kind) for kind in (JOB, JOB_IDENTITY, JOB_EXACT)] == [["same-name"]] * 3
        assert [store.get(kind, "same-name") for kind in (JOB, JOB_IDENTITY, JOB_EXACT)] == \
            ["job", "job-identity", "job-exact"]


def test_a_job_record_of_the_first_layout_is_a_miss(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.set(RecordKind("job", 1), "k", {"blob": "ab" * 32, "diagnostics": []})
        assert store.get(JOB, "k") is None


def test_a_compile_writes_the_documented_job_and_identity_records(tmp_path: Path) -> None:
    job = one_job(tmp_path / "lib")
    with Store(tmp_path / "cache") as store:
        run = run_plan(JobPlan(jobs={job.key: job}), store, JobRunner(tmp_path / "lib", "capi", 1))
        record = store.get(JOB, job.key)
        assert record == {"blob": run.results[job.key].blob, "diagnostics": []}
        assert store.has_blob(record["blob"])
        assert store.get(JOB_IDENTITY, job.identity) == {
            "key": job.key, "closure": [list(c) for c in job.closure], "compiler": job.options.compiler,
            "target": "vulkan1.2", "optimize": False}
        assert store.keys(JOB_EXACT) == []  # written by the job plan, not by a compile


def test_a_failed_compile_is_remembered_without_a_blob_naming_its_file_in_the_library(tmp_path: Path) -> None:
    broken = SHADER.replace("vec4(1.0)", "vec4(undeclared)")
    job = one_job(tmp_path / "lib", broken)
    with Store(tmp_path / "cache") as store:
        run_plan(JobPlan(jobs={job.key: job}), store, JobRunner(tmp_path / "lib", "capi", 1))
        record = store.get(JOB, job.key)
        assert record["blob"] is None and store.keys("blob") == []
    (error,) = [d for d in record["diagnostics"] if d["severity"] == "error"]
    assert (error["file"], error["line"], error["in_materials"]) == ("ok.frag", 3, True)  # not an absolute path
    assert "undeclared" in error["message"]
