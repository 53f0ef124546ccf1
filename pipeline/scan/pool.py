"""Cold scans on a process pool: chunks without a usable scan record, in batches, one worker per core."""

from __future__ import annotations

import concurrent.futures as cf
import typing
from collections.abc import Callable
from pathlib import Path

from pipeline.chunks import ChunkInfo
from pipeline.config import WorldConfig
from pipeline.cpus import usable_cpus
from pipeline.heap import collection_paused, frozen
from pipeline.scan.chunk_scan import ChunkScan
from pipeline.scan.gltf.draws import SharedFacts
from pipeline.workers import fork_context, process_pool

if typing.TYPE_CHECKING:
    from pipeline.world import Selection


# Cold chunks are scanned on a process pool when they hold at least this many files
# together, and each worker gets at least half of it: forking a worker and sending
# its facts back costs about as much as scanning a few dozen small files.
POOL_MIN_FILES = 64


def pool_workers(jobs: int | None, cold_files: int) -> int:
    jobs = usable_cpus() if jobs is None else jobs
    if jobs <= 1 or cold_files < POOL_MIN_FILES:
        return 1
    return max(1, min(jobs, cold_files // (POOL_MIN_FILES // 2)))


_WORKER_SHARED: SharedFacts | None = None


def _pool_task(root: Path, chunks: list[ChunkInfo], config: WorldConfig, optional: frozenset[str],
               olds: list[dict] | None = None) -> list[tuple]:
    """In a worker: scan chunks without a cache entry, or (``olds``, a verifying scan) every file
    of chunks against their entries; facts are shared across its tasks."""
    global _WORKER_SHARED
    if _WORKER_SHARED is None:
        _WORKER_SHARED = SharedFacts()
    out = []
    for i, chunk in enumerate(chunks):
        work = ChunkScan(root, chunk, config, optional, olds[i] if olds else {}, shared=_WORKER_SHARED,
                         verify=olds is not None)
        with collection_paused():
            work.run(chunk.files, lambda: None)
            out.append(work.payload())
        _WORKER_SHARED.end_chunk()
    return out


def chunk_batches(chunks: list[ChunkInfo], cold: list[int], workers: int) -> list[list[int]]:
    """Cold chunk indices in about ``4 * workers`` batches of similar file counts, biggest first."""
    total = sum(len(chunks[i].files) for i in cold)
    size = max(1, total // (4 * workers))
    batches, current, count = [], [], 0
    for i in cold:
        current.append(i)
        count += len(chunks[i].files)
        if count >= size:
            batches.append(current)
            current, count = [], 0
    if current:
        batches.append(current)
    return sorted(batches, key=lambda b: -sum(len(chunks[i].files) for i in b))


def scan_on_pool(target: Selection, config: WorldConfig, optional: frozenset[str], cold: list[int], workers: int,
                  scans: list, finish: Callable[[int], None], step: Callable[[int], None],
                  olds: list[dict] | None = None) -> None:
    """Scan the ``cold`` chunks on a pool; results land at their index (order is the chunks' order).

    A pool that cannot start or breaks leaves the chunks without a result to the in-process scan.
    """
    try:
        with frozen(), process_pool(workers, mp_context=fork_context(), initializer=_reset_worker) as pool:
            futures = {pool.submit(_pool_task, target.root, [target.chunks[i] for i in batch], config, optional,
                                   [olds[i] for i in batch] if olds is not None else None): batch
                       for batch in chunk_batches(target.chunks, cold, workers)}
            for future in cf.as_completed(futures):
                for i, payload in zip(futures[future], future.result()):
                    chunk = target.chunks[i]
                    scans[i] = ChunkScan.from_payload(target.root, chunk, config, optional, payload)
                    finish(i)
                    step(len(chunk.files))
    except (cf.BrokenExecutor, OSError, AssertionError):  # no pool here (no fork, a daemon process ...)
        pass  # chunks without a result are scanned in this process


def _reset_worker() -> None:
    global _WORKER_SHARED
    _WORKER_SHARED = None


