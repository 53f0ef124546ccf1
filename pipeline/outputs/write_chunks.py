"""Many chunks' indexes brought up to date at once: built on a forked pool when enough of them are stale.

Deciding whether a chunk's index is current costs a record look-up and a ``stat``
(:func:`pipeline.outputs.records.outputs_current`) and stays in the cook's process.
Building a stale one is per-draw work (its runtime contract: a pipeline state per draw
and pass, then the compact index), so when :data:`POOL_MIN_CHUNKS` or more are stale
they are built on a pool of forked workers, which inherit the cook's job plan and
results, read reflections through a store connection of their own, and send back each
index's bytes with what the cook merges (its keys, pipeline states and errors; never its
draws).  The cook's process writes every index itself, staged as it arrives (so it holds one
index's bytes at a time) and published together, so the result is the same whatever the
number of workers.  A chunk a worker could not build
(an error, a broken pool) is built again in the cook's process, which reports its error.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec

from pipeline.cache.store import Store
from pipeline.keys.recorded import release_uses
from pipeline.outputs import manifest as mf
from pipeline.outputs.held import HeldMap, HeldSet, Numbered
from pipeline.outputs.chunk_build import CookedJobs
from pipeline.outputs.records import OUTPUTS, as_tuple, outputs_current
from pipeline.outputs.write_chunk import VERIFY_REASON, ChunkWrite, write_built
from pipeline.heap import frozen
from pipeline.structs import replace
from pipeline.workers import MAX_TASK_CHUNKS, fork_context, process_pool

POOL_MIN_CHUNKS = 16  # fewer stale chunks are built in the cook's process: forking costs about what a few small chunks do


class ChunkTask(msgspec.Struct, frozen=True):
    """One chunk to bring up to date: what its index is built from."""

    chunk: str
    level: str
    required: Mapping
    file_errors: list[dict]
    inputs: list | None  # its named input digests (pipeline.outputs.chunk_inputs)


def update_chunks(jobs: CookedJobs, tasks: list[ChunkTask], store: Store, out: Path, has_blob: Callable[[str], bool],
                  write: Callable[[Path, bytes], None], *, verify: bool = False, workers: int = 1,
                  step: Callable[[], None] = lambda: None) -> dict[str, ChunkWrite | Exception]:
    """Each chunk's :class:`ChunkWrite` (or the error that kept its index from being built), by chunk.

    As :func:`pipeline.outputs.write_chunk.update_chunk` for each task, with ``write`` called in
    the tasks' order; ``step`` once per chunk done."""
    done: dict[str, ChunkWrite | Exception] = {}
    stale = []
    for task in tasks:
        try:
            json_path = mf.chunk_manifest_path(out, task.chunk)
            record = as_tuple(store.get(OUTPUTS, str(json_path.resolve())))
            reason = outputs_current(record, task.inputs, json_path)
        except (mf.ManifestError, OSError) as exc:  # a chunk name no index can have
            done[task.chunk] = exc
            step()
            continue
        if reason is None and not verify:
            done[task.chunk] = ChunkWrite(json_path)
            step()
        else:
            stale.append((task, record, reason))
    built: dict[str, tuple[ChunkWrite, Exception | None]] = {}
    if workers > 1 and len(stale) >= POOL_MIN_CHUNKS and store.on_disk:
        _on_pool(jobs, [t for t, _, _ in stale], store, out, has_blob, workers, built, step, write)
    for task, record, reason in stale:
        try:
            found = built.get(task.chunk)
            if found is None:
                result = write_built(jobs, task.chunk, task.level, task.required, task.file_errors, store, out,
                                     has_blob, write)
                release_uses(task.required)
                step()
            else:
                result, failed = found
                if failed is not None:  # its index could not be written when it arrived
                    raise failed
        except (mf.ManifestError, OSError) as exc:
            done[task.chunk] = exc
            continue
        result.reason = reason or (VERIFY_REASON if result.written else None)
        result.record = (task.inputs, record)
        done[task.chunk] = result
    return done


# ------------------------------------------------------------------ the pool
_SHARED: tuple | None = None  # (jobs, tasks, out, has_blob): set before the fork, read by the workers
_STORE: Store | None = None
_SENT: set[str] = set()  # in a worker: the pipeline states whose documents it sent the cook already
_KEYS: "_Shared | None" = None  # in a worker: the key entries it sends, slim and shared


def _start_worker(directory) -> None:
    global _STORE, _KEYS
    _STORE = Store(directory)  # never the parent's connection, inherited through fork
    _SENT.clear()
    _KEYS = _Shared()


def _task(indexes: list[int]) -> list[tuple[str, ChunkWrite, bytes | None]]:
    """In a worker: each chunk's index built and compared with the file on disk (not written)."""
    jobs, tasks, out, has_blob = _SHARED
    found = []
    for i in indexes:
        task, kept = tasks[i], []
        result = write_built(jobs, task.chunk, task.level, task.required, task.file_errors, _STORE, out, has_blob,
                             lambda path, data: kept.append(data))
        release_uses(task.required)
        # what the cook merges; a pipeline state this worker sent before is sent as its id alone (the
        # chunks of a level share most of theirs: the cook holds each document once)
        pipelines = {pid: None if pid in _SENT else doc for pid, doc in result.manifest.pipelines.items()}
        _SENT.update(pipelines)
        slim = replace(result.manifest, draws=(), reflection={}, pipelines=pipelines)
        found.append((task.chunk, _KEYS.keys(replace(result, manifest=slim)), kept[0] if kept else None))
    return found


def _on_pool(jobs: CookedJobs, tasks: list[ChunkTask], store: Store, out: Path, has_blob, workers: int,
             built: dict, step: Callable[[], None], write: Callable[[Path, bytes], None]) -> None:
    """Build ``tasks`` on a pool into ``built`` (chunk -> its result and the error writing its index
    met, if any); whatever it could not build is left out.  Each index is written (staged) as it
    arrives, so the cook's process never holds more than one index's bytes."""
    global _SHARED
    context = fork_context()
    if context is None:
        return
    _SHARED = (jobs, tasks, out, has_blob)
    shared = _Shared()
    size = max(1, min(MAX_TASK_CHUNKS, len(tasks) // (4 * workers)))
    try:
        with frozen(), process_pool(workers, mp_context=context, initializer=_start_worker,
                                             initargs=(store.directory,)) as pool:
            futures = {pool.submit(_task, list(range(i, min(i + size, len(tasks))))): i
                       for i in range(0, len(tasks), size)}
            for future in cf.as_completed(futures):
                del futures[future]  # a future done with lets go of its results: memory stays flat
                try:
                    found = future.result()
                except (cf.BrokenExecutor, OSError):
                    raise
                except Exception:  # noqa: BLE001 - that batch is built again here, which reports its error
                    continue
                for chunk, result, data in found:
                    failed = None
                    if data is not None:
                        try:
                            write(result.json_path, data)
                        except (mf.ManifestError, OSError) as exc:
                            failed = exc
                    built[chunk] = (shared.take(result), failed)
                    step()
    except (cf.BrokenExecutor, OSError, AssertionError):  # no pool here: the rest is built in this process
        pass
    finally:
        _SHARED = None
    shared.finish(built)


class _Shared:
    """What the cook holds of each chunk a worker built, shared across chunks and made as each result
    arrives (:mod:`pipeline.outputs.held`): each pipeline state's document once (a worker sends it
    once: a chunk done later names it by its id), each key text, pipeline-state id and blob hash
    once, each key's entry once, and per chunk arrays of their numbers (its draws per key in
    ``counts``; render states and specialization values left out: the level manifest takes neither
    from a chunk's entries).  In a worker, :meth:`keys` makes what it sends as slim."""

    def __init__(self) -> None:
        self.documents: dict[str, dict] = {}
        self.names = Numbered()    # key texts, pipeline-state ids, blob hashes
        self.entries = Numbered()  # each distinct key entry (draws and states left out)
        self.texts: dict[str, str] = {}  # in a worker: each key text sent once

    def take(self, result: ChunkWrite) -> ChunkWrite:
        """In the cook: ``result`` as held until :meth:`finish`, its pipeline states by id."""
        manifest, names = result.manifest, self.names
        for pid, doc in manifest.pipelines.items():
            if doc is not None:
                self.documents.setdefault(pid, doc)
        keys = HeldMap(names, ((text, self._entry(text, entry)) for text, entry in manifest.keys.items()),
                       self.entries.items)
        counts = HeldMap(names, ((text, entry.draws if result.counts is None else result.counts[text])
                                 for text, entry in manifest.keys.items()))
        pipelines = HeldMap(names, ((pid, names.of(pid)) for pid in manifest.pipelines), _Documents(self))
        before = None if result.keys_before is None else \
            {names.items[names.of(text)]: digest for text, digest in result.keys_before.items()}
        return replace(result, blobs=None if result.blobs is None else HeldSet(names, result.blobs),
                                   manifest=replace(manifest, keys=keys, pipelines=pipelines),
                                   keys=None if result.keys is None else keys, keys_before=before, counts=counts)

    def keys(self, result: ChunkWrite) -> ChunkWrite:
        """In a worker: ``result`` with shared key texts and entries, its draws in ``counts``."""
        manifest, texts = result.manifest, self.texts
        keys, counts, entries = {}, {}, self.entries
        for text, entry in manifest.keys.items():
            text = texts.setdefault(text, text)
            keys[text] = entries.items[self._entry(text, entry)]
            counts[text] = entry.draws if result.counts is None else result.counts[text]
        return replace(result, manifest=replace(manifest, keys=keys),
                                   keys=None if result.keys is None else keys, counts=counts)

    def _entry(self, text: str, entry) -> int:
        """The number of ``entry`` (of key ``text``) among the distinct entries, held slim."""
        return self.entries.of(_same(text, entry), lambda same: _slim(entry, text))

    def finish(self, built: dict) -> None:
        """A chunk naming a pipeline state no result carries is left out of ``built``, to be built again here."""
        documents = self.documents
        for chunk, (result, _) in list(built.items()):
            if any(pid not in documents for pid in result.manifest.pipelines):
                del built[chunk]  # its batch's worker died after sending a document it then named


class _Documents:
    """A pipeline-state id's number -> its document (as the cook's pool results gave them)."""

    def __init__(self, shared: _Shared):
        self.shared = shared

    def __getitem__(self, number: int) -> dict:
        shared = self.shared
        return shared.documents[shared.names.items[number]]


def _same(text: str, entry) -> tuple:
    """What makes two chunks' entries of a key the same entry (draws and states aside)."""
    targets = None if entry.targets is None else \
        tuple(sorted((label, tuple(sorted(stages.items()))) for label, stages in entry.targets.items()))
    return (text, entry.hash, tuple(sorted(entry.stages.items())), targets)


def _slim(entry, text: str):
    return replace(entry, key=text, draws=0, render_states=(), specialization={})
