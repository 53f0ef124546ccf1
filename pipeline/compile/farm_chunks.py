"""Chunk work on the build farm: the chunks whose records missed, scanned and evaluated on Dask workers.

A farm cook (``--scheduler tcp://...``) whose missed chunks hold :data:`FARM_MIN_FILES` files or more
sends them to the workers in batches (a ``local:N`` cluster is this machine's cores: its chunks stay
on the forked pool, :meth:`FarmChunks.wanted`).  A worker does what a local pool worker does
(:class:`pipeline.keys.chunk_pool.ChunkWork`: the chunk's scan, its rule evaluations, its records),
into a store of its own in memory, and sends back what a pool worker sends (the chunk's
``chunk-keys`` summary) with the records it made, as the bytes the cook's cache stores them.  The
cook writes those records, one transaction per batch, and merges the summaries as it does a
pool's; the chunks the farm did not do (refused, a batch that failed, a farm lost) are done on
this machine after.  Compiling then goes to the same cluster (:class:`~pipeline.compile.farm.FarmConnection`:
one start per cook).

Workers read the chunks' files where the cook names them: the farm shares the world (workers that
mount the depot at the same path, or a cluster on this machine at an address).  Before
doing a chunk, a worker makes the chunk's fingerprint itself (:mod:`pipeline.keys.incremental`:
the tool's code, the facts schema, the configuration, every byte of the rule sets, and the
stamp of every file of the chunk, each stat-ed on the worker) and does the chunk only when it
equals the cook's.  A worker that sees other files, other rules or runs other code refuses it;
so the records a cook stores are the ones this machine would have made, and its outputs are
byte-identical to a local cook's.  Only records of the kinds a chunk's work makes are stored
(:data:`pipeline.keys.chunk_pool.CHUNK_RECORDS`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from pipeline.cache.store import Store
from pipeline.chunks import ChunkInfo
from pipeline.keys.chunk_pool import ChunkWork
from pipeline.keys.incremental import chunk_fingerprint, world_base
from pipeline.keys.required import optional_facts
from pipeline.scan.pool import chunk_batches
from pipeline.world import World

if TYPE_CHECKING:  # Dask is imported by the cook that makes a connection (FarmCook), not by this module
    from pipeline.compile.farm import FarmConnection

FARM_MIN_FILES = 256  # fewer missed files than this (an edit's chunk or two) are scanned here: a round trip to
# the farm, or a local cluster's start (0.6 s), costs more than a few hundred files (0.3-0.7 ms each)
MAX_BATCH_CHUNKS = 16   # chunks per batch at most: the cook holds a batch's records whole while it stores them


class ChunkStats(msgspec.Struct):
    """What the farm did of a cook's chunk work; ``to_json()`` is ``pipeline cook --json``'s ``farm.chunks``."""

    sent: int = 0       # chunks sent to the farm
    done: int = 0       # chunks a worker did (their records stored here)
    refused: int = 0    # chunks a worker refused (another fingerprint) or failed on, done here
    failed: int = 0     # chunks of batches that failed or never came back, done here
    batches: int = 0
    wall_s: float = 0.0  # from the first send to the last result
    client_s: float = 0.0  # the cook's own time on the results: storing the records, merging the summaries
    reasons: list[str] = msgspec.field(default_factory=list)  # why chunks were refused or failed, each once

    def to_json(self) -> dict:
        return {"sent": self.sent, "done": self.done, "refused": self.refused, "failed": self.failed,
                "batches": self.batches, "wall_s": round(self.wall_s, 4), "client_s": round(self.client_s, 4),
                "reasons": self.reasons[:5]}


class FarmChunks:
    """The chunk work of one cook on the farm (the ``remote`` of :func:`pipeline.keys.chunk_pool.compute_chunks`)."""

    def __init__(self, connection: FarmConnection, min_files: int | None = None):
        self.connection = connection
        self.min_files = FARM_MIN_FILES if min_files is None else min_files
        self.stats = ChunkStats()

    def wanted(self, missing: list[ChunkInfo]) -> bool:
        """Whether the farm takes these chunks: a farm at an address (its workers are other machines' cores)
        and two chunks or more of :data:`FARM_MIN_FILES` files.  A ``local:N`` cluster runs on this machine's
        cores, which the forked pool shares at less cost (its workers inherit the loaded rule sets and store
        their records themselves: a cold cook of the 10,000-file bench world scans in 2.4 s on the pool of 2,
        3.2 s on a LocalCluster of 2)."""
        return self.connection.kind != "local" and len(missing) >= 2 \
            and sum(len(c.files) for c in missing) >= self.min_files

    def __call__(self, world: World, root, base: str, optional: frozenset[str], missing: list[ChunkInfo],
                 prints: dict[str, str | None]):
        """Per batch done: ``(chunks, found, records)``; a farm that fails leaves the rest to this machine."""
        from distributed import as_completed

        # Dask's own log lines are kept quiet by the connection, while it is open
        client = self.connection.client()  # a farm that cannot be reached stops the cook (FarmError)
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        began = time.perf_counter()
        portable = _portable(world)
        futures = {}
        # about four batches per worker, of similar file counts, biggest first: one slow batch does not hold
        # a worker's whole share
        for batch in chunk_batches(missing, list(range(len(missing))), workers):
            for start in range(0, len(batch), MAX_BATCH_CHUNKS):
                chunks = [missing[i] for i in batch[start:start + MAX_BATCH_CHUNKS]]
                future = client.submit(chunk_task, portable, root, base, optional, chunks,
                                       [prints.get(c.name) for c in chunks], pure=False)
                futures[future] = chunks
        self.stats.sent, self.stats.batches = len(missing), len(futures)
        try:
            for future in as_completed(list(futures)):
                chunks = futures.pop(future)
                try:
                    found, records, reasons = future.result()
                except Exception as exc:  # noqa: BLE001 - a batch that failed is done here
                    self._note(len(chunks), "failed", f"a batch failed on the farm ({type(exc).__name__})")
                    continue
                for reason in reasons:
                    self._note(0, "refused", reason)
                self.stats.refused += sum(1 for done in found if done is None)
                self.stats.done += sum(1 for done in found if done is not None)
                taken = time.perf_counter()
                yield chunks, found, records
                self.stats.client_s += time.perf_counter() - taken  # the cook stored and merged them meanwhile
        except Exception as exc:  # noqa: BLE001 - the farm lost: what it did not send back is done here
            self._note(sum(len(c) for c in futures.values()), "failed",
                       f"the farm was lost ({type(exc).__name__})")
        finally:
            for future in futures:
                future.cancel()
            self.stats.wall_s = time.perf_counter() - began

    def _note(self, count: int, kind: str, reason: str) -> None:
        setattr(self.stats, kind, getattr(self.stats, kind) + count)
        if reason not in self.stats.reasons:
            self.stats.reasons.append(reason)


def _portable(world: World) -> World:
    """The world as a worker opens it: its fields, none of what this process loaded for it (rule sets
    load again there, from the same folder) nor its folder listing."""
    return World(world.root, world.config, world.rules_dir, world.materials_dir, world.cache_dir, world.scope)


# ------------------------------------------------------------------ on a worker
_WORK: dict[str, ChunkWork] = {}  # base -> this worker's chunk work (its store in memory, its shared facts)


def chunk_task(world: World, root, base: str, optional: frozenset[str], chunks: list[ChunkInfo],
               prints: list[str | None]) -> tuple[list, dict[str, bytes], list[str]]:
    """On a worker: per chunk what a pool worker sends (``(summary, None, None)`` when its records are among
    those made, else its draws and key definitions too) or None when refused; the records made (name ->
    stored bytes); and why chunks were refused."""
    work = _WORK.get(base)
    if work is None:
        reason = _differs(world, root, base, optional)
        if reason is not None:
            return [None] * len(chunks), {}, [reason]
        _WORK.clear()
        work = _WORK[base] = ChunkWork(world, root, Store.in_memory(), base, optional)
    found, reasons = [], []
    for info, fingerprint in zip(chunks, prints):
        if fingerprint is None or chunk_fingerprint(work.world, root, info, base) != fingerprint:
            found.append(None)
            reasons.append("a worker sees other files than the cook (the world at another path, or changed)")
            continue
        try:
            found.append(work.sent(info, fingerprint))  # as a pool worker sends it
        except Exception as exc:  # noqa: BLE001 - the cook does the chunk itself and reports what it finds
            found.append(None)
            reasons.append(f"a chunk failed on a worker ({type(exc).__name__})")
    return found, work.store.drain(), sorted(set(reasons))


def _differs(world: World, root, base: str, optional: frozenset[str]) -> str | None:
    """Why this worker cannot do the cook's chunks (None: it can)."""
    try:
        if optional_facts(world.rulesets) != optional or world_base(world, root, optional) != base:
            return "a worker runs other code, or sees other rule sets or configuration, than the cook"
    except Exception as exc:  # noqa: BLE001 - rule sets that do not load here (another path, another version)
        return f"a worker cannot load the cook's world ({type(exc).__name__})"
    return None


class FarmCook:
    """One cook's farm: its connection (compiles go there too) and its chunk work, closed when the cook ends."""

    def __init__(self, scheduler: str):
        from pipeline.compile.farm import FarmConnection  # imports Dask: only a farm cook pays for it

        self.scheduler = scheduler
        self.connection = FarmConnection(scheduler)
        self.chunks = FarmChunks(self.connection)

    def __enter__(self) -> "FarmCook":
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    def report(self, result):
        """``result`` (a :class:`~pipeline.cook.run.CookResult`) with what the farm did of the chunk work in
        ``result.farm["chunks"]`` (``cook --json``), the cluster's start or the connection (``connect_s``),
        and, when it left chunks to this machine, a warning."""
        stats = self.chunks.stats
        if stats.sent:
            result.farm = {**(result.farm or {"scheduler": self.scheduler}), "chunks": stats.to_json()}
        if result.farm is not None and self.connection.startup_s:
            result.farm["connect_s"] = round(self.connection.startup_s, 4)  # once per cook, whoever connected
        here = stats.refused + stats.failed
        if here:
            result.warnings.append(f"{self.scheduler}: {here} of {stats.sent} chunks were scanned on this "
                                   "machine: " + "; ".join(stats.reasons[:3]))
        return result
