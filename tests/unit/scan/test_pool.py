"""Cold scans on a process pool: how many workers, and results equal to scanning in this process."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from runtime_helpers import SAMPLE
from pipeline.config import WorldConfig
from pipeline.scan import pool
from pipeline.scan.chunk_scan import ChunkScan
from pipeline.chunks import discover
from pipeline.scan.pool import POOL_MIN_FILES, pool_workers, scan_on_pool


@pytest.mark.parametrize("jobs, files, workers", [
    (1, 10_000, 1),                              # one job: no pool
    (8, POOL_MIN_FILES - 1, 1),                  # too few files to pay for a pool
    (8, POOL_MIN_FILES, 2),                      # each worker gets at least half the minimum
    (8, POOL_MIN_FILES * 2, 4),
    (8, 10_000, 8),                              # never more than the jobs
])
def test_pool_workers(jobs: int, files: int, workers: int) -> None:
    assert pool_workers(jobs, files) == workers


def test_pool_workers_default_to_the_usable_cpus(monkeypatch) -> None:
    monkeypatch.setattr(pool, "usable_cpus", lambda: 3)
    assert pool_workers(None, 10_000) == 3
    monkeypatch.setattr(pool, "usable_cpus", lambda: 1)
    assert pool_workers(None, 10_000) == 1


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    root = tmp_path_factory.mktemp("pool")
    for chunk in ("forest/c00", "forest/c01", "forest/c02", "town/market"):
        shutil.copytree(SAMPLE / chunk, root / chunk)
    return SimpleNamespace(root=root, chunks=discover(root, WorldConfig()))


def in_process(target, i: int) -> ChunkScan:
    work = ChunkScan(target.root, target.chunks[i], WorldConfig(), frozenset(), {})
    work.run(target.chunks[i].files, lambda: None)
    return work


def test_the_pool_scans_the_cold_chunks_into_their_places(target) -> None:
    cold = [0, 2, 3]  # chunk 1 has a usable record: not the pool's
    scans, finished, steps = [None] * len(target.chunks), [], []
    scan_on_pool(target, WorldConfig(), frozenset(), cold, 2, scans, finished.append, steps.append)
    assert sorted(finished) == cold and scans[1] is None
    assert sum(steps) == sum(len(target.chunks[i].files) for i in cold)
    for i in cold:
        assert scans[i].draws == in_process(target, i).draws and scans[i].chunk == target.chunks[i]


def test_a_pool_that_cannot_start_leaves_the_chunks_to_this_process(target, monkeypatch) -> None:
    def no_pool(*args, **kwargs):
        raise OSError("no processes here")

    monkeypatch.setattr(pool, "process_pool", no_pool)
    scans = [None] * len(target.chunks)
    scan_on_pool(target, WorldConfig(), frozenset(), [0, 1], 2, scans, lambda i: None, lambda n: None)
    assert scans == [None] * len(target.chunks)


def test_a_pool_scan_inside_a_cook_leaves_the_cook_s_frozen_heap_frozen(monkeypatch) -> None:
    import gc

    from pipeline import api
    from pipeline.scan import pool
    from pipeline.heap import cook_heap
    from pipeline.scan.scanner import scan
    from paths import SAMPLE_WORLD

    monkeypatch.setattr(pool, "POOL_MIN_FILES", 2)  # the sample world's few files on a pool
    ran = []
    monkeypatch.setattr(pool, "chunk_batches", lambda *args, real=pool.chunk_batches: ran.append(1) or real(*args))
    world = api.open_world(SAMPLE_WORLD)
    with cook_heap():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        scan(world, jobs=2)
        assert gc.get_freeze_count() >= frozen  # still frozen: only the cook's end unfreezes
    assert gc.get_freeze_count() == 0
    scan(world, jobs=2)
    assert gc.get_freeze_count() == 0  # on its own, the pool scan puts back what it froze
    assert len(ran) == 2  # both scans ran on the pool
