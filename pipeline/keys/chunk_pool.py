"""Chunks whose keys record missed: scanned and evaluated chunk by chunk, on a process pool when
there is enough of them.

The chunk is the unit of work.  One worker scans a chunk against its scan record
(:func:`pipeline.scan.scanner.scan_chunk`), evaluates its draws' keys through the
store-backed memo of rule evaluations (:func:`pipeline.keys.chunk_keys.evaluate_chunk`),
and writes the chunk's scan and ``chunk-keys`` records itself; the cook's process
receives the ``chunk-keys`` record alone, the compact summary it merges, and never
holds a chunk's draws or facts.  Workers are forked (the world and its rule sets are
inherited, not sent) and each opens the store on its own; they share evaluations
through the store and, within one worker, through its memo.  The result is the same
whatever the number of workers; chunks a pool could not do (no fork, a broken pool)
are done in this process.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.cache.store import Store
from pipeline.chunks import ChunkInfo
from pipeline.keys.chunk_keys import ChunkKeys, StoredEvaluations, evaluate_chunk
from pipeline.keys.recorded import StoredDraws
from pipeline.keys.records import CHUNK_DRAWS, CHUNK_KEYS, EVALUATIONS, KEY_DEFS, TRACES, defining, store_definitions
from pipeline.scan.buffers import preload
from pipeline.heap import collection_paused, frozen
from pipeline.scan.gltf.draws import SharedFacts
from pipeline.scan.pool import chunk_batches, pool_workers
from pipeline.scan.records import SCAN
from pipeline.scan.scanner import scan_chunk
from pipeline.workers import MAX_TASK_CHUNKS, fork_context, process_pool


@dataclass
class ChunkWork:
    """What doing a chunk needs, in the cook's process or in a worker."""

    world: object
    root: object  # the world's root as the cook's selection names it
    store: Store
    base: str
    optional: frozenset[str]
    memo: StoredEvaluations = field(init=False)
    shared: SharedFacts = field(default_factory=SharedFacts)
    defined: set = field(default_factory=set)  # key hashes whose ``key`` record is known to be stored
    stored: bool = False  # whether the last chunk done was recorded
    records: tuple | None = None  # and its records, when it was

    def __post_init__(self) -> None:
        self.memo = StoredEvaluations(self.store, self.base)

    def chunk(self, info: ChunkInfo, fingerprint: str | None) -> ChunkKeys:
        """Scan and evaluate one chunk; its record stored under ``fingerprint`` when it can be."""
        world = self.world
        # the chunk's records (scan, evaluations, keys, draws): one commit; the collector waits (no cycles here)
        with collection_paused(), self.store.batched():
            found = scan_chunk(self.root, info, world.config, self.optional, self.store, self.shared)
            record = evaluate_chunk(world.rulesets, info, found, self.optional, self.memo)
            self.stored = fingerprint is not None and record.deps is not None
            self.records = record.to_records() if self.stored else None
            if self.stored:
                summary, draws = self.records
                store_definitions(self.store, record, self.defined)
                self.store.set(CHUNK_DRAWS, fingerprint, draws)
                self.store.set(CHUNK_KEYS, fingerprint, summary)
        self.shared.end_chunk()
        return record

    def sent(self, info: ChunkInfo, fingerprint: str | None) -> tuple:
        """Do one chunk, and give what a worker (pool or farm) sends the cook for it: its ``chunk-keys`` summary,
        with its ``chunk-draws`` record and its keys' definitions only when they could not be stored (else
        the cook reads them from the store)."""
        record = self.chunk(info, fingerprint)
        summary, draws = self.records or record.to_records()  # made once: the stored records, else now
        return (summary, None, None) if self.stored else (summary, draws, record.definitions())


def compute_chunks(world, store: Store, root, missing: list[ChunkInfo], optional: frozenset[str], base: str,
                   prints: dict[str, str | None], progress: Callable[[int, int], None] | None = None,
                   interned: dict | None = None, jobs: int | None = None, remote=None) -> list[ChunkKeys]:
    """The :class:`ChunkKeys` of the ``missing`` chunks, in their order; each recorded in ``store``.
    ``interned``: keys already made by the caller (records from a pool share them); ``jobs``: the most
    worker processes (None: one per core); ``remote``: a build farm's chunk work
    (:class:`~pipeline.compile.farm_chunks.FarmChunks`), given the chunks first when there are enough
    of them: it yields batches of ``(chunks, found, records)`` (per chunk what a pool worker sends, or None
    when a worker refused it; the records the workers made, by stored name), and what it does not do
    is done here.

    Raises :class:`~pipeline.keys.chunk_keys.Unattributed` when a chunk's scan reports on a file
    outside it (the cook's full path handles that world).
    """
    total, done = sum(len(c.files) for c in missing), [0]

    def step(info: ChunkInfo) -> None:
        done[0] += len(info.files)
        if progress:
            progress(done[0], total)

    records: dict[str, ChunkKeys] = {}
    interned = {} if interned is None else interned
    if remote is not None and remote.wanted(missing):
        for chunks, found, made in remote(world, root, base, optional, missing, prints):
            store.set_raw(made, CHUNK_RECORDS)  # a worker's records, as this machine would have made them
            _merge(store, chunks, found, prints, records, step, interned)
        missing_here = [c for c in missing if c.name not in records]
    else:
        missing_here = missing
    # one chunk is one task: a pool would only add a fork to it
    workers = min(pool_workers(jobs, sum(len(c.files) for c in missing_here)), len(missing_here)) \
        if store.on_disk and missing_here else 1
    if workers > 1:
        _on_pool(world, root, store, missing_here, optional, base, prints, workers, records, step, interned)
    work = None
    for info in missing:
        if info.name not in records:
            work = work or ChunkWork(world, root, store, base, optional)
            records[info.name] = work.chunk(info, prints.get(info.name))
            step(info)
    return [records[c.name] for c in missing]


# ------------------------------------------------------------------ the pool
_WORKER: ChunkWork | None = None


def _start_worker(world, root, directory, base: str, optional: frozenset[str]) -> None:
    """In a new worker: its own store connection (never the parent's, inherited through fork)."""
    global _WORKER
    _WORKER = ChunkWork(world, root, Store(directory), base, optional)


def _task(chunks: list[ChunkInfo], prints: list[str | None]) -> tuple[list, list[str]]:
    """In a worker: each chunk's ``chunk-keys`` record, with its ``chunk-draws`` record and its keys'
    definitions only when it could not be stored (else the draws are read from the store by whatever
    writes the chunk's outputs, and the definitions from their ``key`` records); the store's warnings."""
    out = [_WORKER.sent(info, fingerprint) for info, fingerprint in zip(chunks, prints)]
    warnings, _WORKER.store.warnings[:] = list(_WORKER.store.warnings), []
    return out, warnings


def _on_pool(world, root, store: Store, missing: list[ChunkInfo], optional: frozenset[str], base: str,
             prints: dict, workers: int, records: dict, step: Callable[[ChunkInfo], None], interned: dict) -> None:
    """Chunks done on a pool land in ``records``; a pool that cannot start or breaks leaves the rest."""
    context = fork_context()
    if context is None:
        return
    preload(optional)  # imported once here, not once per worker
    try:
        with frozen(), process_pool(workers, mp_context=context, initializer=_start_worker,
                                             initargs=(world, root, store.directory, base, optional)) as pool:
            futures = {}
            batches = chunk_batches(missing, list(range(len(missing))), workers)
            for batch in (b[i:i + MAX_TASK_CHUNKS] for b in batches for i in range(0, len(b), MAX_TASK_CHUNKS)):
                chunks = [missing[i] for i in batch]
                futures[pool.submit(_task, chunks, [prints.get(c.name) for c in chunks])] = chunks
            for future in cf.as_completed(futures):
                found, warnings = future.result()
                chunks = futures.pop(future)  # a future done with lets go of its records: memory stays flat
                del future
                store.warnings += [w for w in warnings if w not in store.warnings]
                _merge(store, chunks, found, prints, records, step, interned)
    except (cf.BrokenExecutor, OSError, AssertionError):  # no pool here: the rest is done in this process
        pass


# the records a chunk's work makes: what a farm worker may have the cook store for it
CHUNK_RECORDS = (SCAN, EVALUATIONS, TRACES, KEY_DEFS, CHUNK_DRAWS, CHUNK_KEYS)


def _merge(store: Store, chunks: list[ChunkInfo], found: list, prints: dict, records: dict,
           step: Callable[[ChunkInfo], None], interned: dict) -> None:
    """What a pool or farm worker sent for ``chunks`` (per chunk ``(summary, draws, definitions)``, None: not
    done) made into :class:`ChunkKeys`; draws and definitions it did not send are read from ``store``."""
    for info, done in zip(chunks, found):
        if done is None:
            continue
        summary, draws, defined = done
        stored = StoredDraws(store, prints.get(info.name)) if draws is None else draws
        records[info.name] = ChunkKeys.from_records(summary, interned, stored,
                                                    defined.get if defined else defining(store))
        step(info)
