"""A farm cook's chunk work on a real Dask LocalCluster (worker processes) at its address, as a farm of other
machines is named, with the real compiler: the chunks are scanned and evaluated on the workers, the outputs
are byte-identical to a cook on this machine, the records the workers made serve later cooks here, and
chunks a worker refuses are done here."""

from __future__ import annotations

import sys
from pathlib import Path

import logging

import pytest
from distributed import LocalCluster

from paths import REPO

sys.path.insert(0, str(REPO / "bench"))

import worldgen  # noqa: E402

from pipeline import api  # noqa: E402
from pipeline.compile import farm_chunks  # noqa: E402
from pipeline.compile.farm import LOCAL_HTTP  # noqa: E402
from pipeline.keys import chunk_pool, incremental  # noqa: E402

LIBRARY = {"rules": REPO / "rules", "materials": REPO / "materials"}
SPEC = worldgen.WorldSpec(chunks=4, files_per_chunk=5, props=10)


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def farm():
    """A farm of two worker processes, named by its scheduler's address."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, silence_logs=logging.CRITICAL,
                      **LOCAL_HTTP) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def world(tmp_path: Path, monkeypatch):
    worldgen.generate(tmp_path / "world", SPEC)
    monkeypatch.setattr(farm_chunks, "FARM_MIN_FILES", 1)  # this small world's chunks go to the farm too
    return tmp_path / "world"


def cook(world: Path, base: Path, **options) -> api.CookResult:
    result = api.cook(api.open_world(world, **LIBRARY), cache=base / "cache", out=base / "out", jobs=2, **options)
    assert result.ok, result.errors
    return result


def test_chunks_are_scanned_on_the_workers_and_the_outputs_are_a_local_cook_s(world, farm, tmp_path: Path,
                                                                               monkeypatch) -> None:
    here = []
    do_chunk = chunk_pool.ChunkWork.chunk
    monkeypatch.setattr(chunk_pool.ChunkWork, "chunk", lambda self, info, fp: here.append(info.name) or do_chunk(
        self, info, fp))  # seen in this process only (a worker process has its own)
    farmed = cook(world, tmp_path / "farm", scheduler=farm)
    assert farmed.farm["chunks"] | {"wall_s": 0, "client_s": 0} == {
        "sent": 4, "done": 4, "refused": 0, "failed": 0, "batches": farmed.farm["chunks"]["batches"], "wall_s": 0,
        "client_s": 0, "reasons": []}
    assert 0 < farmed.farm["chunks"]["client_s"] < farmed.farm["chunks"]["wall_s"]
    assert here == [] and not farmed.warnings
    assert farmed.farm["connect_s"] > 0 and farmed.farm["workers"] == 2  # one cluster: chunks, then compiles
    local = cook(world, tmp_path / "local", scheduler="none")
    assert files_of(tmp_path / "farm" / "out") == files_of(tmp_path / "local" / "out")
    assert len(here) == 4 and local.draws == farmed.draws  # the local cook's chunks, done in this process
    here.clear()

    again = cook(world, tmp_path / "farm", scheduler="none")  # the workers' records, found here
    assert here == [] and again.written == [] and not again.run.compiled
    edited = worldgen.edit_chunk(world, SPEC)  # new props in one file: new keys, new jobs
    for base in ("farm", "local"):
        cook(world, tmp_path / base, scheduler="none")
    assert here == [edited, edited]  # the edited chunk alone, once per cook
    assert files_of(tmp_path / "farm" / "out") == files_of(tmp_path / "local" / "out")


def test_chunks_a_worker_refuses_are_done_here_and_the_cook_says_so(world, farm, tmp_path: Path,
                                                                    monkeypatch) -> None:
    real = incremental._fingerprint

    def other(*args, **kwargs):  # the cook's fingerprints, as if it saw files the workers do not
        found = real(*args, **kwargs)
        return None if found is None else "other" + found[5:]
    monkeypatch.setattr(incremental, "_fingerprint", other)
    farmed = cook(world, tmp_path / "farm", scheduler=farm)
    assert (farmed.farm["chunks"]["refused"], farmed.farm["chunks"]["done"]) == (4, 0)
    assert farmed.warnings == [f"{farm}: 4 of 4 chunks were scanned on this machine: a worker sees other files "
                               "than the cook (the world at another path, or changed)"]
    monkeypatch.undo()
    local = cook(world, tmp_path / "local", scheduler="none")
    assert files_of(tmp_path / "farm" / "out") == files_of(tmp_path / "local" / "out")
    assert local.draws == farmed.draws


def test_a_local_cluster_leaves_the_chunks_to_the_pool_of_this_machine(world, tmp_path: Path) -> None:
    farmed = cook(world, tmp_path / "farm", scheduler="local:2")
    assert "chunks" not in (farmed.farm or {}) and farmed.run.compiled  # compiled there, scanned here
