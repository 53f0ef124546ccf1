"""What the farm trust and failure tests share: a LocalCluster whose workers load the fault preload
(``farm_faults``), the sample world cooked here for reference, and cooks run as the command line."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
from pathlib import Path

import farm_faults
from distributed import Client, LocalCluster

from pipeline import api
from pipeline.compile.farm import LOCAL_HTTP

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
SAMPLE = ROOT / "examples" / "sample_world"
COOK_TIMEOUT = 240  # seconds: a regression that hangs fails the test instead of the suite


def tree_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def reference_cook(folder: Path) -> Path:
    """The sample world cooked on this machine, no farm: the outputs every farm cook must match."""
    result = api.cook(SAMPLE, cache=folder / "cache", out=folder / "out", jobs=2, scheduler="none")
    assert result.errors == [] and len(result.run.compiled) > 20
    return folder / "out"


@contextlib.contextmanager
def fault_cluster(workers: int = 2):
    """A LocalCluster whose workers load the fault preload; yields (client, the worker named 0)."""
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, preload=["farm_faults"],
                      silence_logs=logging.CRITICAL, **LOCAL_HTTP) as cluster, Client(cluster) as client:
        victim = next(a for a, w in cluster.scheduler_info["workers"].items() if str(w["name"]) == "0")
        yield client, victim


def set_fault(client: Client, victim: str, fault: str) -> None:
    """Every worker honest, but ``victim`` with ``fault``."""
    client.run(farm_faults.set_fault, "honest")
    client.run(farm_faults.set_fault, fault, workers=[victim])


def fault_env(fault: str, worker: str = "all", **extra: str) -> dict:
    """The environment of a cook whose own ``local:N`` workers load the fault preload."""
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, DASK_DISTRIBUTED__WORKER__PRELOAD='["farm_faults"]',
                PIPELINE_FARM_FAULT=fault, PIPELINE_FARM_FAULT_WORKER=worker, **extra)


def cook_cli(world: Path, folder: Path, *args: str, env: dict | None = None,
             out: str = "out") -> subprocess.CompletedProcess:
    """``pipeline cook`` in its own process, bounded in time."""
    return subprocess.run([sys.executable, "-m", "pipeline", "cook", str(world), "--cache", str(folder / "cache"),
                           "--out", str(folder / out), "-q", *args], capture_output=True, text=True,
                          timeout=COOK_TIMEOUT, env=env, cwd=ROOT)


def problem_lines(stderr: str) -> list[str]:
    """The warning and error lines a cook printed (anything else on stderr is a failure too)."""
    return [line for line in stderr.splitlines() if line.strip()]


def assert_clean_cache(folder: Path, reference: Path) -> None:
    """A second cook from the same cache without the farm compiles nothing, reports nothing wrong,
    and writes the reference outputs: nothing untrusted was remembered."""
    again = api.cook(SAMPLE, cache=folder / "cache", out=folder / "again", scheduler="none")
    assert again.errors == [] and again.run.compiled == []
    assert tree_files(folder / "again") == tree_files(reference)

