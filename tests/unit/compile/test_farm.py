"""The build farm client: jobs sent as data to a Dask cluster, results checked, failures confirmed here."""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path

import pytest
from distributed import LocalCluster

from pipeline.compile import farm_address
from pipeline.compile.farm import LOCAL_HTTP, FarmCompiler, FarmError, quiet_dask, sigint_ignored
from pipeline.compile.scheduler import JobRunner
from pipeline.compilers import CompileRequest, SourceTree, get_backend
from pipeline.plan.jobs import JobOptions, StageJob, job_key
from paths import DATA

LIBRARY = DATA / "glsl"
IDENTITY = get_backend("capi").identity


def make_job(tree: SourceTree, source: str, defines=(), stage: str = "fragment") -> StageJob:
    request = CompileRequest(source, stage, defines=tuple(defines))
    closure = tree.closure(source)
    options = JobOptions(compiler=IDENTITY)
    return StageJob(request, closure, options, job_key(request, closure, options))


class CountingRunner(JobRunner):
    """This machine's compiler, counting the job keys it compiled."""

    def __init__(self, root: Path):
        super().__init__(root, "capi", 1)
        self.compiled: list[str] = []

    def _batch(self, jobs):
        self.compiled += [job.key for job in jobs]
        return super()._batch(jobs)


def test_a_batch_carries_each_file_s_text_once_by_content_hash() -> None:
    tree = SourceTree(LIBRARY)
    jobs = [make_job(tree, "mesh/mesh.frag"), make_job(tree, "mesh/mesh.vert", stage="vertex"),
            make_job(tree, "mesh/mesh.frag", [("CLEARCOAT", "1")])]
    sent = FarmCompiler("tcp://127.0.0.1:9", tree, "capi", IDENTITY).farm_batch(jobs)
    wanted = {sha: (LIBRARY / rel).read_text() for job in jobs for rel, sha in job.closure}
    assert sent.files == wanted and len(wanted) < sum(len(job.closure) for job in jobs)  # shared includes once
    assert [(j.key, j.request, j.closure) for j in sent.jobs] == [(j.key, j.request, j.closure) for j in jobs]
    assert (sent.backend, sent.compiler, sent.library) == ("capi", IDENTITY, tree.named_root)


def test_a_file_edited_after_planning_stops_the_send_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "inc.glsl").write_text("const float K = 1.0;\n")
    (tmp_path / "a.frag").write_text('#version 450\n#include "inc.glsl"\nlayout(location = 0) out vec4 c;\n'
                                     "void main() { c = vec4(K); }\n")
    planned = make_job(SourceTree(tmp_path), "a.frag")
    (tmp_path / "inc.glsl").write_text("const float K = 2.0;\n")
    farm = FarmCompiler("tcp://127.0.0.1:9", SourceTree(tmp_path), "capi", IDENTITY)
    with pytest.raises(FarmError) as caught:
        farm.farm_batch([planned])
    assert str(caught.value) == f"{tmp_path.resolve()}/inc.glsl: error: changed during the cook; cook again"


def test_nothing_to_compile_contacts_no_scheduler() -> None:
    farm = FarmCompiler("tcp://127.0.0.1:9", SourceTree(LIBRARY), "capi", IDENTITY, connect_timeout=0.01)
    assert farm.run([], on_done=None) == [] and farm.stats.workers == 0 and farm.warnings == []


def test_a_local_cluster_larger_than_the_machine_is_bounded_and_said(monkeypatch) -> None:
    monkeypatch.setattr(farm_address, "usable_cpus", lambda: 1)
    farm = FarmCompiler("local:5", SourceTree(LIBRARY), "capi", IDENTITY)
    assert (farm.kind, farm.address) == ("local", farm_address.LOCAL_PER_CPU)
    assert farm.warnings == [f"local:5: 5 worker processes for 1 usable CPUs; starting "
                             f"{farm_address.LOCAL_PER_CPU} ({farm_address.LOCAL_PER_CPU} per CPU)"]


def test_sigint_is_ignored_only_inside_and_only_from_the_main_thread() -> None:
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(RuntimeError), sigint_ignored():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        raise RuntimeError("the cluster failed to start")
    assert signal.getsignal(signal.SIGINT) is before
    seen = []

    def elsewhere() -> None:
        with sigint_ignored():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert seen == [before]  # a thread cannot set signals: the caller owns them


def test_quiet_dask_silences_dask_s_loggers_and_gives_them_back() -> None:
    chatty, already, other = (logging.getLogger(name) for name in
                              ("distributed.worker", "distributed.comm", "pipeline.not_dask"))
    already.disabled = True
    try:
        with quiet_dask():
            assert logging.getLogger("distributed").disabled and chatty.disabled and not other.disabled
        assert not logging.getLogger("distributed").disabled and not chatty.disabled
        assert already.disabled  # what was off before stays off
    finally:
        already.disabled = False


def test_overlapping_quiet_uses_give_the_loggers_back_when_the_last_ends() -> None:
    """A cook's connection stays quiet across its chunk work and compiles; a farm run's quiet may begin
    before the connection's and end first."""
    chatty = logging.getLogger("distributed.worker")
    run = quiet_dask()
    run.__enter__()
    connection = quiet_dask()
    connection.__enter__()
    late = logging.getLogger("distributed.made_while_quiet")  # a logger made after the first use began
    with quiet_dask():
        assert late.disabled
    run.__exit__(None, None, None)  # the first to begin ends first
    assert chatty.disabled and late.disabled
    connection.__exit__(None, None, None)
    assert not chatty.disabled and not late.disabled


@pytest.fixture(scope="module")
def cluster():
    """One in-process Dask worker (threads, not processes: the client's own compiler serves it)."""
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, silence_logs=logging.CRITICAL,
                      **LOCAL_HTTP) as running:
        yield running


def jobs_and_runner():
    tree = SourceTree(LIBRARY)
    good = [make_job(tree, "broken/top_error.frag"), make_job(tree, "mesh/mesh.vert", stage="vertex")]
    bad = make_job(tree, "broken/top_error.frag", [("BROKEN", "1")])
    return tree, good, bad, CountingRunner(LIBRARY)


def test_a_farm_compiles_the_jobs_and_confirms_each_failure_here(cluster) -> None:
    tree, good, bad, local = jobs_and_runner()
    farm = FarmCompiler(cluster.scheduler_address, tree, "capi", IDENTITY, local=local)
    started, done = [], {}
    farm.on_started = started.append
    cancelled = farm.run([*good, bad], lambda job, output, where: done.__setitem__(job.key, (output, where)))
    worker = next(iter(cluster.scheduler_info["workers"]))
    assert cancelled == [] and len(started) == 1 and farm.calls == 3
    assert {key: where for key, (_, where) in done.items()} == {good[0].key: worker, good[1].key: worker,
                                                                bad.key: "local"}
    assert local.compiled == [bad.key]  # the worker's failure, compiled again before it is believed
    here = JobRunner(LIBRARY, "capi", 1)._batch([*good, bad])
    assert [done[job.key][0].spirv for job in [*good, bad]] == [o.spirv for o in here]  # the same bytes
    assert done[bad.key][0].diagnostics == here[2].diagnostics and here[2].diagnostics
    assert farm.stats.workers == 1 and sum(farm.stats.batch_sizes) == 3 and farm.stats.compiled_here == 1
    assert farm.warnings == [] and farm.errors == []


def test_an_audit_of_every_result_recompiles_them_here_and_trusts_an_honest_worker(cluster) -> None:
    tree, good, bad, local = jobs_and_runner()
    farm = FarmCompiler(cluster.scheduler_address, tree, "capi", IDENTITY, local=local, audit=100)
    done = {}
    farm.run([*good, bad], lambda job, output, where: done.__setitem__(job.key, where))
    assert farm.stats.audited == len(good) and sorted(local.compiled) == sorted(job.key for job in [*good, bad])
    worker = next(iter(cluster.scheduler_info["workers"]))
    assert [done[job.key] for job in good] == [worker, worker] and done[bad.key] == "local"
    assert farm.stats.banned_workers == {} and farm.warnings == []
