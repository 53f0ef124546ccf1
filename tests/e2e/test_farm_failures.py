"""Every farm failure is clean: one line, and the cook completes on this machine.

Real Dask clusters (a LocalCluster with the ``farm_faults`` preload, the cook's own
``local:N`` cluster, a ``dask scheduler`` process), real glslang, the command line in its
own process with a time limit.  A batch that raises, a worker that never answers, workers
that die at start or mid-batch, a scheduler killed mid-cook: exit 0, one warning, outputs
byte-identical to a local cook.  A malformed address: exit 1, one line, before any work.
Ctrl-C of a ``local:2`` cook: exit 130, one line, no worker traceback.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from farm_helpers import (
    COOK_TIMEOUT,
    ROOT,
    SAMPLE,
    assert_clean_cache,
    cook_cli,
    fault_env,
    problem_lines,
    set_fault,
    tree_files,
)

linux_only = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux signals and /proc")



def with_timeout(folder: Path, seconds: float) -> Path:
    """The sample world with ``[farm] batch_timeout``."""
    world = folder / "world"
    subprocess.run(["cp", "-r", str(SAMPLE), str(world)], check=True)
    with (world / "pipeline.toml").open("a") as toml:
        toml.write(f"\n[farm]\nbatch_timeout = {seconds}\n")
    return world


def assert_completed_here(run, folder: Path, reference: Path, warning: str) -> None:
    assert run.returncode == 0, run.stderr
    assert len(problem_lines(run.stderr)) == 1, run.stderr
    (line,) = problem_lines(run.stderr)
    assert re.fullmatch(warning, line), line
    assert tree_files(folder / "out") == tree_files(reference)
    assert_clean_cache(folder, reference)


@pytest.mark.slow
def test_a_batch_that_raises_is_compiled_elsewhere(farm, reference, tmp_path):
    client, victim = farm
    set_fault(client, victim, "raise")
    try:
        run = cook_cli(SAMPLE, tmp_path, "--scheduler", client.scheduler_info()["address"])
    finally:
        set_fault(client, victim, "honest")
    assert_completed_here(run, tmp_path, reference, rf"warning: {re.escape(victim)}: farm worker failed a batch "
                          r"\(RuntimeError: injected fault\); it gets no more jobs this cook and its jobs are "
                          r"compiled elsewhere")


@pytest.mark.slow
def test_a_worker_that_never_answers_times_out_and_its_jobs_go_elsewhere(farm, reference, tmp_path):
    """The worker sleeps an hour in every batch; the batch timeout (15 s here: enough for an honest
    worker's batch on a loaded machine, far below the hour) gives it up."""
    client, victim = farm
    world = with_timeout(tmp_path, 15)
    set_fault(client, victim, "hang")
    began = time.monotonic()
    try:
        run = cook_cli(world, tmp_path, "--scheduler", client.scheduler_info()["address"])
    finally:
        client.restart(timeout=60)  # the sleeping worker's thread is busy: a fresh process for the next test
    assert time.monotonic() - began < COOK_TIMEOUT
    assert_completed_here(run, tmp_path, reference, rf"warning: {re.escape(victim)}: farm worker did not answer a "
                          r"batch of \d+ jobs in time; it gets no more jobs this cook and its jobs are compiled "
                          r"elsewhere")


@pytest.mark.parametrize("address, why", [
    ("tcp://[::1", "not a Dask scheduler address (Invalid IPv6 URL); expected tcp://HOST:8786"),
    ("tcp://127.0.0.1:99999", "not a Dask scheduler address (Port out of range 0-65535); expected tcp://HOST:8786"),
    ("http://127.0.0.1:8786", "unknown protocol 'http' (Dask speaks tcp, tls, inproc, ws, wss, ucx)"),
    ("tcp://", "not a Dask scheduler address; expected tcp://HOST:8786"),
])
def test_a_malformed_scheduler_address_is_one_line_before_any_work(address, why, tmp_path):
    run = cook_cli(SAMPLE, tmp_path, "--scheduler", address)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"{address}: error: {why}\n"
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_local_cluster_size_is_bounded_by_the_usable_cpus(monkeypatch) -> None:
    from pipeline.compile import farm_address
    from pipeline.compilers import SourceTree
    from pipeline.compile.farm import FarmCompiler

    monkeypatch.setattr(farm_address, "usable_cpus", lambda: 3)
    farm = FarmCompiler("local:99999", SourceTree(ROOT / "materials"), "capi", "any")
    assert farm.address == 6
    assert farm.warnings == ["local:99999: 99999 worker processes for 3 usable CPUs; starting 6 (2 per CPU)"]
    assert FarmCompiler("local:6", SourceTree(ROOT / "materials"), "capi", "any").warnings == []


@pytest.mark.slow
def test_workers_that_die_while_the_cluster_starts_leave_the_cook_to_this_machine(reference, tmp_path):
    """Every worker of the cook's own local:2 cluster kills itself when asked for its compiler."""
    run = cook_cli(SAMPLE, tmp_path, "--scheduler", "local:2", env=fault_env("die-at-start"))
    assert_completed_here(run, tmp_path, reference, r"warning: local:2: the build farm failed \(no worker answered: "
                          r"tcp://127\.0\.0\.1:\d+: .*\); the jobs it did not finish compile on this machine")


@pytest.mark.slow
def test_workers_that_die_in_every_batch_leave_the_jobs_to_this_machine(reference, tmp_path):
    """Every worker SIGKILLs itself in every batch; Dask gives a batch up after its first death here."""
    env = fault_env("die", DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
    run = cook_cli(SAMPLE, tmp_path, "--scheduler", "local:2", env=env)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    lines = problem_lines(run.stderr)
    assert 1 <= len(lines) <= 2 and all(re.fullmatch(
        r"warning: local:2: (farm workers died running \d+ jobs; they compile on this machine|the build farm failed "
        r"\(every worker this cook used has left the cluster\); the jobs it did not finish compile on this machine)",
        line) for line in lines), lines
    assert tree_files(tmp_path / "out") == tree_files(reference)
    assert_clean_cache(tmp_path, reference)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(path: Path, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the farm never started a batch"
        time.sleep(0.05)


@linux_only
@pytest.mark.slow
def test_the_scheduler_killed_mid_cook_leaves_the_rest_to_this_machine(reference, tmp_path):
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    mark = tmp_path / "batch-started"
    env = fault_env("slow", PIPELINE_FARM_MARK=str(mark))
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--no-dashboard"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                               "--no-dashboard", "--death-timeout", "10"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        cook = subprocess.Popen([sys.executable, "-m", "pipeline", "cook", str(SAMPLE), "--cache",
                                 str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "-q", "--scheduler",
                                 address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        wait_for(mark, cook)
        os.killpg(scheduler.pid, signal.SIGKILL)
        _, stderr = cook.communicate(timeout=COOK_TIMEOUT)
    finally:
        for process in (scheduler, worker):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    run = subprocess.CompletedProcess(cook.args, cook.returncode, "", stderr)
    assert_completed_here(run, tmp_path, reference, rf"warning: {re.escape(address)}: the build farm failed \(lost "
                          r"the connection to the scheduler\); the jobs it did not finish compile on this machine")


@pytest.mark.slow
@linux_only
def test_ctrl_c_of_a_local_cluster_cook_is_one_line_and_no_worker_traceback(tmp_path):
    """A terminal's Ctrl-C reaches the cook and its worker processes (one process group)."""
    mark = tmp_path / "batch-started"
    cook = subprocess.Popen([sys.executable, "-m", "pipeline", "cook", str(SAMPLE), "--cache", str(tmp_path / "c"),
                             "--out", str(tmp_path / "o"), "-q", "--scheduler", "local:2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=fault_env("slow", PIPELINE_FARM_MARK=str(mark)), start_new_session=True)
    try:
        wait_for(mark, cook)
        os.killpg(cook.pid, signal.SIGINT)
        stdout, stderr = cook.communicate(timeout=COOK_TIMEOUT)
    finally:
        if cook.poll() is None:
            os.killpg(cook.pid, signal.SIGKILL)
    assert (cook.returncode, stdout, stderr) == (130, "", "pipeline: interrupted\n")
