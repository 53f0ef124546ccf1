"""Run the stage jobs of a plan: cache lookup, compile the misses, store the results.

The dirty check runs cheap to expensive and records why each job runs (the ninja
``-d explain`` habit):

1. a job record (:mod:`pipeline.cache.job_records`) with a readable blob: a hit, nothing runs.
2. A remembered compile error for that key: a hit too (reported again, not
   recompiled until an input changes).
3. Otherwise the job runs, and its job-identity record (the same source, stage,
   entry and defines as compiled last time) says why: never compiled, source
   changed (naming the files), compiler changed, flags changed, or the cache entry
   was missing or corrupt.

Misses compile on a process pool in batches (each worker loads the compiler once);
results are stored as they arrive, so a killed cook keeps what it finished.  A few
misses (at most :data:`INLINE_PER_WORKER` per worker, an artist's one-chunk edit)
compile in this process instead: starting the pool and loading the compiler in
every worker costs more than the pool would save on them.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import math
from collections.abc import Set as AbstractSet
from pathlib import Path

import msgspec

from pipeline.cache.job_records import JOB, JOB_IDENTITY
from pipeline.cache.store import Store
from pipeline.compilers.reflection_records import REFLECTION
from pipeline.compilers import CompileOutput, compile_batch, get_backend
from pipeline.plan.jobs import JobPlan, StageJob
from pipeline.cpus import usable_cpus
from pipeline.errors import Diagnostic, canonical_folder
from pipeline.progress import NullProgress, Progress
from pipeline.workers import process_pool

MAX_BATCH = 32
# Misses per worker up to which compiling in this process beats starting a pool: a
# worker's start (spawn, imports, compiler load) costs about 0.3 s, a typical job
# 5-25 ms, so a pool of N workers only pays off beyond a few dozen jobs.
INLINE_PER_WORKER = 8


class JobResult(msgspec.Struct, frozen=True):
    """What a job produced: a blob digest, or diagnostics, or both (warnings)."""

    blob: str | None
    diagnostics: tuple[Diagnostic, ...] = ()
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.blob is not None

    def to_record(self, library: str = "") -> dict:
        """The job record; a file of the shader library (``library``, its canonical folder) is kept
        relative to it, so the record reads right wherever the library is found next time."""
        return {"blob": self.blob, "diagnostics": [_portable(d.to_json(), library) for d in self.diagnostics]}

    @classmethod
    def from_record(cls, record: dict, library: str = "") -> "JobResult":
        diags = tuple(Diagnostic.from_json(_canonical(d, library)) for d in record.get("diagnostics", ()))
        return cls(record.get("blob"), diags, cached=True)


def _portable(doc: dict, library: str) -> dict:
    file = doc.get("file") or ""
    if library and file.startswith(library):
        return doc | {"file": file[len(library):], "in_materials": True}
    return doc


def _canonical(doc: dict, library: str) -> dict:
    doc = dict(doc)
    if doc.pop("in_materials", False):
        doc["file"] = library + str(doc["file"])
    return doc


class RunResult(msgspec.Struct):
    results: dict[str, JobResult] = msgspec.field(default_factory=dict)   # job key -> result
    compiled: list[str] = msgspec.field(default_factory=list)              # job keys compiled this run
    reasons: dict[str, str] = msgspec.field(default_factory=dict)          # job key -> why it ran
    cancelled: list[str] = msgspec.field(default_factory=list)             # not run (fail-fast)
    where: dict[str, str] = msgspec.field(default_factory=dict)            # job key -> where it compiled
    fetched: list[str] = msgspec.field(default_factory=list)               # job keys copied from the shared cache
    seconds: dict[str, float] = msgspec.field(default_factory=dict)        # job key -> compile wall time

    @property
    def cache_hits(self) -> int:
        return sum(1 for r in self.results.values() if r.cached)


class JobRunner:
    """The seam between the scheduler and a compiler: tests count what ran through it."""

    def __init__(self, materials_dir: Path, backend: str = "capi", jobs: int | None = None,
                 allowed: tuple[Path, ...] = ()):
        self.materials_dir = Path(materials_dir)
        self.allowed = tuple(allowed)  # folders outside materials_dir that sources may lead to
        self.backend = backend
        self.jobs = max(1, jobs or usable_cpus())
        self.library = canonical_folder(self.materials_dir)  # diagnostics name its files under this
        self.calls = 0  # requests compiled, for tests

    @property
    def identity(self) -> str:
        """The compiler's name and version: part of every job's cache key."""
        return get_backend(self.backend).identity

    def run(self, jobs: list[StageJob], on_done, fail_fast: bool = False) -> list[str]:
        """Compile ``jobs``; call ``on_done(job, output)`` as each finishes; return cancelled keys.

        ``calls`` counts the requests actually compiled (not those a fail-fast
        stop cancelled).
        """
        if self.jobs == 1 or len(jobs) <= INLINE_PER_WORKER * self.jobs:
            return self._run_inline(jobs, on_done, fail_fast)
        return self._run_pool(jobs, on_done, fail_fast)

    def _batch(self, jobs: list[StageJob]) -> list[CompileOutput]:
        outputs = compile_batch([j.request for j in jobs], self.materials_dir, self.backend, self.allowed)
        self.calls += len(outputs)
        return outputs

    def _run_inline(self, jobs, on_done, fail_fast) -> list[str]:
        for i, job in enumerate(jobs):
            (output,) = self._batch([job])
            on_done(job, output)
            if fail_fast and output.spirv is None:
                return [j.key for j in jobs[i + 1:]]
        return []

    def _run_pool(self, jobs, on_done, fail_fast) -> list[str]:
        """Batches on a process pool, at most ``jobs + 1`` in flight; results delivered as they come.

        Batches are submitted one by one as others finish, so a fail-fast stop
        submits nothing more; the few batches already in flight still finish and
        are delivered (and stored): their work is done, dropping it would only
        cost a recompile later.
        """
        size = max(1, min(MAX_BATCH, math.ceil(len(jobs) / (self.jobs * 4))))
        batches = iter([jobs[i:i + size] for i in range(0, len(jobs), size)])
        pending_keys = {j.key for j in jobs}
        with process_pool(min(self.jobs, math.ceil(len(jobs) / size))) as pool:
            in_flight: dict[cf.Future, list[StageJob]] = {}
            stop = False
            for _ in range(self.jobs + 1):
                self._submit(pool, batches, in_flight)
            while in_flight:
                done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    failed = self._deliver(in_flight.pop(future), future.result(), on_done, pending_keys)
                    stop = stop or (fail_fast and failed)
                    if not stop:
                        self._submit(pool, batches, in_flight)
        return sorted(pending_keys)

    def _submit(self, pool: cf.ProcessPoolExecutor, batches, in_flight: dict) -> None:
        batch = next(batches, None)
        if batch is not None:
            in_flight[pool.submit(compile_batch, [j.request for j in batch], self.materials_dir, self.backend,
                                  self.allowed)] = batch

    def _deliver(self, batch: list[StageJob], outputs: list[CompileOutput], on_done, pending_keys: set) -> bool:
        """Hand a finished batch's outputs to ``on_done``; True when one of them failed."""
        self.calls += len(outputs)
        with batch_of(on_done):
            for job, output in zip(batch, outputs):
                on_done(job, output)
                pending_keys.discard(job.key)
        return any(o.spirv is None for o in outputs)


def batch_of(on_done):
    """The context in which ``on_done`` takes a batch of results whose records are written together (one
    store commit), when it offers one (``on_done.batched``); else nothing."""
    batched = getattr(on_done, "batched", None)
    return batched() if batched is not None else contextlib.nullcontext()


def look_up(jobs: dict[str, StageJob], store: Store, library: str,
            held: AbstractSet[str] = frozenset()) -> tuple[RunResult, list[StageJob]]:
    """Each job's cached result from the local store, else the reason it must compile (:func:`why`):
    the run so far and the misses, in job-key order (``library``: the shader library's canonical folder).

    A cached result's blob is read and its hash checked (a corrupt one is a miss: the job compiles
    again), but for the blobs in ``held``: those the output folder's library holds as this machine's
    last cook left it (:func:`pipeline.outputs.write_library.held_blobs`), which the outputs take from
    there, never from the store; for them the store's copy is only looked up."""
    run, misses = RunResult(), []
    records = list(store.get_each(JOB, sorted(jobs)))  # a few hundred records read together
    parsed = {key: _parsed_result(record, library) for key, record in records}
    # the held blobs' entries are looked up together (one query, not one per job)
    stored = store.blobs_stored({r.blob for r in parsed.values() if r is not None and r.blob in held})
    for key, record in records:
        job = jobs[key]
        cached = _checked_result(parsed[key], store, held, stored)
        if cached is not None:
            run.results[key] = cached
        else:
            misses.append(job)
            run.reasons[key] = why(job, store, had_record=record is not None)
    return run, misses


def run_plan(plan: JobPlan, store: Store, compiler: JobRunner, *, fail_fast: bool = False,
             explain: bool = False, progress: Progress | None = None, remote=None,
             held: AbstractSet[str] = frozenset()) -> RunResult:
    """Look every job up in the store, compile the misses, store what they produce.

    ``remote`` (a :class:`~pipeline.compile.shared.SharedTier`) is asked for the local
    misses first; what it holds is copied into the store and counts as a cache hit
    (``fetched``).  What this cook compiles is handed back to it (write-back).  ``held``: see
    :func:`look_up`.
    """
    progress = progress or NullProgress()
    library = getattr(compiler, "library", "")
    run, misses = look_up(plan.jobs, store, library, held)
    if misses and remote is not None:
        misses = _fetch(misses, remote, store, run, library)
    if misses:
        progress.start("compiling", len(misses))

        def on_done(job: StageJob, output: CompileOutput, where: str = "local") -> None:
            run.results[job.key] = store_result(job, output, store, library)
            run.compiled.append(job.key)
            run.where[job.key] = where
            run.seconds[job.key] = output.seconds
            if remote is not None:
                remote.compiled(job, output)
            progress.advance()

        on_done.batched = store.batched  # a batch of results delivered together: its records in one commit
        run.cancelled = compiler.run(misses, on_done, fail_fast)
        progress.finish()
    if remote is not None:
        remote.finish()
    return run


def _fetch(misses: list[StageJob], remote, store: Store, run: RunResult, library: str) -> list[StageJob]:
    """Copy what the shared tier holds into the store; the jobs still to compile.

    Only blobs are taken: a failed compile from elsewhere is never remembered here (the job compiles, and a
    real failure is then stored as this machine's own)."""
    found = {key: output for key, output in remote.fetch(misses).items() if output.spirv is not None}
    for job in misses:
        if job.key in found:
            stored = store_result(job, found[job.key], store, library)
            run.results[job.key] = JobResult(stored.blob, stored.diagnostics, cached=True)
            run.fetched.append(job.key)
            run.reasons.pop(job.key, None)
    return [job for job in misses if job.key not in found]


def _parsed_result(record, library: str) -> JobResult | None:
    """A job record as a result; None when it is not one."""
    if not isinstance(record, dict):
        return None
    try:
        return JobResult.from_record(record, library)
    except (KeyError, TypeError, ValueError):
        return None


def _checked_result(result: JobResult | None, store: Store, held: AbstractSet[str],
                    stored: AbstractSet[str]) -> JobResult | None:
    """``result`` when the store holds what it names: a held blob's entry (``stored``: those found), any
    other blob read and its hash checked; None otherwise (the job compiles again)."""
    if result is None:
        return None
    if result.blob is not None and not (result.blob in stored if result.blob in held
                                        else store.has_blob(result.blob)):
        return None
    if result.blob is None and not result.diagnostics:
        return None
    return result


def store_result(job: StageJob, output: CompileOutput, store: Store, library: str = "") -> JobResult:
    """Record a compiled job: its blob, its job record and its identity record (the result as a cook keeps it)."""
    blob = store.put_blob(output.spirv) if output.spirv is not None else None
    result = JobResult(blob, tuple(output.diagnostics))
    store.set(JOB, job.key, result.to_record(library))
    if blob is not None and output.reflection is not None:  # a farm worker reflected it: the outputs need not
        revision, doc = output.reflection
        store.set(REFLECTION, f"{blob}:{revision}", doc)
    identity = {"key": job.key, "closure": [list(c) for c in job.closure], "compiler": job.options.compiler,
                "target": job.request.target, "optimize": job.request.optimize}
    if job.request.plugins:
        identity["plugins"] = [list(p) for p in job.request.plugins]
    store.set(JOB_IDENTITY, job.identity, identity)
    return result


def why(job: StageJob, store: Store, had_record: bool = False) -> str:
    """Why a job that is not in the cache has to run, with the plug-ins it goes through."""
    reason = _why(job, store, had_record)
    if job.request.plugins:
        reason += "; through plug-ins " + ", ".join(" ".join(filter(None, p[:2])) for p in job.request.plugins)
    return reason


def _why(job: StageJob, store: Store, had_record: bool) -> str:
    last = store.get(JOB_IDENTITY, job.identity)
    if not isinstance(last, dict):
        return "new: this source and define set were never compiled"
    if last.get("key") == job.key:
        return "cache entry missing or unreadable" if had_record else "cache entry missing"
    if last.get("compiler") != job.options.compiler:
        return f"compiler changed ({last.get('compiler')} -> {job.options.compiler})"
    before, now = {p[0]: p for p in last.get("plugins") or []}, {p[0]: list(p) for p in job.request.plugins}
    edited = [name for name in now if name in before and before[name] != now[name]]
    if edited:
        return "plug-in changed: " + ", ".join(edited)
    if (last.get("target"), last.get("optimize")) != (job.request.target, job.request.optimize):
        return "flags changed (target or optimize)"
    if set(before) != set(now):
        return "plug-ins changed: now " + (", ".join(now) or "none")
    old = {p: h for p, h in last.get("closure", [])}
    new = dict(job.closure)
    changed = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
    if changed:
        return "source changed: " + ", ".join(changed)
    return "inputs changed"
