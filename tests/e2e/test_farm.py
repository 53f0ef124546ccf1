"""The build farm: cooks on a real Dask LocalCluster (worker processes) with the real compiler.

Outputs of a farm cook are compared byte for byte with a cook on the local process
pool; a worker process is killed with SIGKILL in the middle of a cook; a compiler
identity the workers do not have is refused.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from distributed import LocalCluster

from pipeline import api
from pipeline.cache.job_records import JOB
from pipeline.cache.store import Store
from pipeline.cli.cook import command as cook_command
from pipeline.compilers.reflection_records import REFLECTION
from pipeline.compilers import CompileRequest, SourceTree, compile_batch, get_backend
from pipeline.compile.farm import LOCAL_HTTP, FarmCompiler, FarmError, batch_size, parse_scheduler
from pipeline.compile.farm_worker import CompilerMismatch, FarmBatch, FarmJob, MemoryTree, compile_farm_batch
from pipeline.compile.scheduler import JobRunner
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"


def tree_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_same_outputs(a: Path, b: Path) -> None:
    files_a, files_b = tree_files(a), tree_files(b)
    assert sorted(files_a) == sorted(files_b)
    assert [name for name in files_a if files_a[name] != files_b[name]] == []


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, api.CookResult]:
    """The sample world cooked on the local process pool."""
    folder = tmp_path_factory.mktemp("pool")
    compiler = JobRunner(MATERIALS, "capi", 2)
    result = api.cook(SAMPLE, cache=folder / "cache", out=folder / "out", jobs=2, compiler=compiler,
                      scheduler="none")
    assert compiler.calls == len(result.plan.jobs) > 20
    return folder / "out", result


def farm_compiler(scheduler: str = "local:2", identity: str | None = None) -> FarmCompiler:
    tree = SourceTree(MATERIALS)
    return FarmCompiler(scheduler, tree, "capi", identity or get_backend("capi").identity)


@pytest.mark.slow
def test_local_cluster_outputs_are_byte_identical(reference, tmp_path: Path, monkeypatch) -> None:
    """... and the workers reflected their blobs: the cook ran no spirv-cross of its own for them."""
    from pipeline.outputs import reflection

    ref_out, ref = reference
    farm = farm_compiler()
    here: list[int] = []
    real = reflection.reflect
    monkeypatch.setattr(reflection, "reflect", lambda blob: here.append(len(blob)) or real(blob))
    result = api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "out", compiler=farm)
    assert result.errors == [] and len(result.run.compiled) == len(ref.run.compiled) == farm.calls
    assert_same_outputs(ref_out, tmp_path / "out")
    spirv = {r.blob for key, r in result.run.results.items()
             if r.blob and result.plan.jobs[key].request.target.startswith("vulkan")}
    with Store(tmp_path / "cache") as store:
        assert spirv and all(store.get(REFLECTION, f"{d}:{reflection.tool_version()}") for d in spirv)
    assert here == []
    where = {line["where"] for line in result.explain_lines()}
    assert len(where) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in where)  # both workers compiled
    stats = result.to_json()["farm"]
    assert stats["workers"] == 2 and stats["batches"] >= 2 and stats["per_job_ms"] > 0 and stats["overhead_ms"] > 0
    assert sum(farm.stats.batch_sizes) == len(result.run.compiled)
    again = api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "out", scheduler="local:2")
    assert again.run.compiled == [] and again.farm is None  # nothing to compile: no cluster started


@pytest.mark.slow
def test_killed_worker_mid_cook_is_retried_elsewhere(reference, tmp_path: Path) -> None:
    """SIGKILL one worker process while it holds batches; the cook still completes, outputs identical."""
    ref_out, ref = reference
    farm = farm_compiler()
    state: dict = {}

    def started(client) -> None:
        state["client"] = client
        state["pids"] = client.run(os.getpid)

    class KillWhenBusy:
        def start(self, phase, total):
            self.phase = phase

        def advance(self, n=1):
            if self.phase == "compiling" and "killed" not in state:
                busy = {w: tasks for w, tasks in state["client"].processing().items() if tasks}
                if busy:  # the first time a worker holds a batch after a result came back
                    victim = sorted(busy)[0]
                    os.kill(state["pids"][victim], signal.SIGKILL)
                    state["killed"] = (victim, len(busy[victim]))

        def finish(self):
            pass

        def note(self, line):
            pass

    farm.on_started = started
    result = api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "out", compiler=farm,
                      progress=KillWhenBusy())
    victim, holding = state["killed"]
    assert holding >= 1  # the killed worker had batches queued or running
    with pytest.raises(ProcessLookupError):
        os.kill(state["pids"][victim], 0)
    assert result.errors == [] and sorted(result.run.compiled) == sorted(ref.run.compiled)
    assert_same_outputs(ref_out, tmp_path / "out")


def test_workers_refuse_another_compiler(tmp_path: Path) -> None:
    farm = farm_compiler(identity="glslang 0.0 (C API); SPIRV-Tools v0")
    with pytest.raises(FarmError) as caught:
        api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "out", compiler=farm)
    message = str(caught.value)
    assert "no worker has the compiler the jobs need (glslang 0.0 (C API); SPIRV-Tools v0)" in message
    assert "glslang 1" in message  # what the workers have


def test_worker_function_refuses_a_batch_keyed_for_another_compiler() -> None:
    request = CompileRequest("pbr/pbr.vert", "vertex")
    batch = FarmBatch((FarmJob("k", request, ()),), {}, "capi", "glslang 0.0 (C API)", "/game/materials/")
    with pytest.raises(CompilerMismatch, match="the jobs were keyed for 'glslang 0.0 \\(C API\\)'"):
        compile_farm_batch(batch)


@pytest.mark.parametrize("backend", ["capi", "cli"])
def test_job_sent_as_data_compiles_like_the_files_on_disk(tmp_path: Path, backend: str) -> None:
    """Same SPIR-V and the same located diagnostics from the closure's text as from the folder."""
    lib = tmp_path / "lib"
    (lib / "inc").mkdir(parents=True)
    (lib / "inc" / "common.glsl").write_text("vec4 tint() { return vec4(TINT); }\n")
    (lib / "ok.frag").write_text('#version 450\n#include "inc/common.glsl"\nlayout(location=0) out vec4 c;\n'
                                 "void main() { c = tint(); }\n")
    (lib / "bad.frag").write_text('#version 450\n#include "inc/common.glsl"\nvoid main() { undefined_call(); }\n')
    tree = SourceTree(lib)
    requests = [CompileRequest("ok.frag", "fragment", defines=(("TINT", "0.5"),)),
                CompileRequest("bad.frag", "fragment", defines=(("TINT", "1.0"),))]
    on_disk = compile_batch(requests, lib, backend)
    jobs = tuple(FarmJob(r.source, r, tree.closure(r.source)) for r in requests)
    files = {sha: tree.parsed(rel).text for job in jobs for rel, sha in job.closure}
    sent = compile_farm_batch(FarmBatch(jobs, files, backend, get_backend(backend).identity, tree.named_root))
    assert on_disk[0].spirv and [r.spirv for r in sent.results] == [o.spirv for o in on_disk]
    assert [r.diagnostics for r in sent.results] == [o.diagnostics for o in on_disk]
    assert sent.results[1].diagnostics[0].location.file == f"{lib.resolve()}/bad.frag"  # as the client names it
    assert sent.results[1].diagnostics[0].location.line == 3


def test_memory_tree_resolves_includes_like_the_folder() -> None:
    tree = SourceTree(MATERIALS)
    closure = tree.closure("pbr/pbr.frag")
    memory = MemoryTree({rel: tree.read(rel) for rel, _ in closure}, tree.named_root)
    assert memory.closure("pbr/pbr.frag") == closure
    assert memory.tested_macros("pbr/pbr.frag") == tree.tested_macros("pbr/pbr.frag")


def test_batch_size_amortises_overhead_and_feeds_every_worker() -> None:
    assert batch_size(0.010, None, 1000, 4) == 1                 # nothing measured yet
    assert batch_size(0.010, 0.020, 1000, 4) == 10               # 10 ms overhead <= 5% of 10 x 20 ms
    assert batch_size(0.010, 0.020, 30, 4) == 4                  # 30 jobs left for 4 workers x 2 in flight
    assert batch_size(0.010, 0.0001, 100000, 2) == 64            # capped
    assert batch_size(0.0, 0.020, 1000, 4) == 1


@pytest.mark.parametrize("text", ["local:0", "local:x", "farm:8786"])
def test_bad_scheduler_is_a_located_error(text: str, tmp_path: Path) -> None:
    with pytest.raises(FarmError):
        parse_scheduler(text)
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    run = CliRunner().invoke(cook_command, [str(world), "--cache", str(tmp_path / "c"), "--out",
                                            str(tmp_path / "o"), "--scheduler", text, "-q"])
    assert run.exit_code == 1
    assert run.output.startswith(f"{text}: error: expected ")


def test_scheduler_from_environment_and_config(tmp_path: Path, monkeypatch) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    (world / "pipeline.toml").write_text('[farm]\nscheduler = "local:0"\n')
    with pytest.raises(FarmError, match="local:0"):
        api.cook(world, cache=tmp_path / "c", out=tmp_path / "o")
    monkeypatch.setenv("PIPELINE_SCHEDULER", "local:x")
    with pytest.raises(FarmError, match="local:x"):
        api.cook(world, cache=tmp_path / "c", out=tmp_path / "o")


@pytest.mark.slow
def test_corpus_on_local_cluster_matches_the_pool(corpus: Path, tmp_path: Path) -> None:
    """The whole corpus: pool cook, then the same cache without compile results cooked on the farm."""
    pool = api.cook(corpus, cache=tmp_path / "a", out=tmp_path / "pool", jobs=2, scheduler="none")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    with Store(tmp_path / "b") as store:  # keep scan and key records: the farm cook only compiles
        for key in store.keys(JOB):
            store.delete(JOB, key)
        for digest in store.keys("blob"):
            store.delete_blob(digest)
    farm = api.cook(corpus, cache=tmp_path / "b", out=tmp_path / "farm", scheduler="local:2")
    assert sorted(farm.run.compiled) == sorted(pool.run.compiled) and len(farm.run.compiled) > 100
    assert farm.errors == pool.errors and farm.farm["workers"] == 2
    assert_same_outputs(tmp_path / "pool", tmp_path / "farm")


@pytest.mark.slow
def test_cli_cooks_on_a_running_scheduler(reference, tmp_path: Path) -> None:
    """``pipeline cook --scheduler tcp://...`` against a scheduler this test runs; --explain names the worker."""
    ref_out, _ = reference
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, **LOCAL_HTTP) as cluster:
        worker = next(iter(cluster.scheduler_info["workers"]))
        run = subprocess.run([sys.executable, "-m", "pipeline", "cook", str(SAMPLE), "--cache",
                              str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--scheduler",
                              cluster.scheduler_address, "--explain"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    ran = [line for line in run.stdout.splitlines() if re.match(r"^ +pbr/pbr\.(vert|frag) \[\w+\] for ", line)]
    assert ran and all(f" on {worker}: new: " in line for line in ran)
    assert f"farm {cluster.scheduler_address}: 1 workers" in run.stdout
    assert_same_outputs(ref_out, tmp_path / "out")


def test_unreachable_scheduler_is_a_located_error(tmp_path: Path) -> None:
    farm = FarmCompiler("tcp://127.0.0.1:9", SourceTree(MATERIALS), "capi", get_backend("capi").identity,
                        connect_timeout=1)
    with pytest.raises(FarmError, match="^tcp://127.0.0.1:9: error: cannot use the Dask scheduler"):
        api.cook(SAMPLE, cache=tmp_path / "c", out=tmp_path / "o", compiler=farm)
