"""The cook: required keys -> stage jobs -> cache / compile -> per-chunk outputs.

Outputs are written chunk by chunk with :mod:`pipeline.outputs.write_chunk` (atomic, and a
file whose bytes would not change is not rewritten), then each touched level's
union manifest is rebuilt from the chunk manifests on disk (:mod:`pipeline.outputs.write_level`),
so cooking one chunk keeps its level manifest whole.  Each writer returns what it did;
this module merges that into the one :class:`CookResult`.
"""

from __future__ import annotations

import errno
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from pipeline.cache.store import Store
from pipeline.cache.use_records import record_use
from pipeline.outputs import manifest as mf
from pipeline.outputs.atomic import Staged, cleanup_stale_temps
from pipeline.outputs.chunk_build import CookedJobs
from pipeline.outputs.chunk_inputs import JobResults, chunk_inputs, shared_inputs
from pipeline.cook.changes import KeysAdded, define_changes, first_keys, record_key_changes
from pipeline.compilers import SourceTree
from pipeline.outputs.contract import add_fallbacks
from pipeline.cook.error_docs import (
    cancelled_doc,
    compact,
    compile_doc,
    compile_errors,
    cook_error,
    errors_by_chunk,
    job_users,
    manifest_prefix,
    scan_errors,
    world_named,
)
from pipeline.plan.jobs import JobPlan, unknown_compile_families
from pipeline.plan.setup import JobSetup, plan_for, world_setup
from pipeline.outputs.write_chunk import ChunkWrite, prefetch_reflections, record_outputs
from pipeline.outputs.write_chunks import ChunkTask, update_chunks
from pipeline.outputs.write_library import Library, held_blobs, library_lock
from pipeline.outputs.write_level import Part, update_level
from pipeline.compile.scheduler import JobRunner, RunResult, run_plan
from pipeline.outputs.sweep import file_signature, sweep_outputs
from pipeline.cook.timings import append_cook, cook_stamp, timing_rows
from pipeline.errors import CookDiagnostic, Location, PipelineError, canonical_folder, one_line
from pipeline.keys.incremental import CookInput
from pipeline.keys.key import PermutationKey
from pipeline.progress import NullProgress, Progress
from pipeline.world import World


class CookOptions(msgspec.Struct, frozen=True):
    out: Path = Path("build")
    jobs: int = 1
    backend: str = "capi"
    fail_fast: bool = False
    optimize: bool = False
    target: str = "vulkan1.2"
    sweep: str | None = None  # remove outputs of chunks that no longer exist: "" whole world, else a level
    scheduler: str | None = None  # a Dask scheduler address or local:N (pipeline.compile.farm); None: this machine
    audit: float = 0.0            # percent of farm results recompiled here and compared (pipeline.compile.farm_trust)
    farm_timeout: float | None = None  # seconds a farm batch may take at least (None: the farm's default)
    verify: bool = False  # trust no output stamp: every pak's checksum checked, every manifest compared
    farm: object | None = None  # the cook's FarmConnection (pipeline.compile.farm), shared with its chunk work


JSON_FORMAT = 1  # the layout version of the cook's JSON document (its "format" field)


@dataclass
class CookResult:
    """What a cook did; ``to_json()`` is the ``pipeline cook --json`` document."""

    chunks: int
    draws: int
    keys: int
    stage_uses: int
    plan: JobPlan
    run: RunResult
    errors: list[CookDiagnostic] = field(default_factory=list)  # located, with the key whose job reported each
    outputs: list[str] = field(default_factory=list)   # every output file of the cooked chunks
    written: list[str] = field(default_factory=list)   # those rewritten by this cook
    removed: list[str] = field(default_factory=list)   # outputs of chunks that no longer exist, removed
    warnings: list[str] = field(default_factory=list)
    fallbacks: dict[str, dict[str, str]] = field(default_factory=dict)  # chunk -> shader/pass -> fallback key
    fallback_keys: int = 0                               # of ``keys``: fallbacks no draw requires
    library: str = ""                                    # the shader library's canonical folder (errors name files under it)
    manifest_prefix: str = "materials/"                  # how manifests name it (world-relative: any cwd)
    farm: dict | None = None                             # what the build farm measured (FarmStats)
    remote: dict | None = None                           # what the shared cache tier did
    keys_added: KeysAdded = field(default_factory=KeysAdded)  # {chunk, key, hash, nearest} new in a rewritten manifest
    keys_removed: list[dict] = field(default_factory=list)  # {chunk, key, hash} gone from it
    new_chunks: list[str] = field(default_factory=list)                # chunks with no manifest before
    explain_outputs: list[dict] = field(default_factory=list)  # {path, chunk | level, reason}: each file written
    first_keys: dict[str, str] = field(default_factory=dict)           # job key -> first key (by text) needing it
    first_hashes: dict[str, str] = field(default_factory=dict)         # job key -> that key's hash
    _explained: list[dict] | None = field(default=None, init=False, repr=False, compare=False)  # explain_lines, once made
    timing_log: str | None = None                                      # where this cook's job times went
    duration: float | None = None                                      # seconds of wall time (api.cook sets it)
    published_at: float | None = None  # perf_counter() when its chunk indexes were in place (library first)
    outputs_seconds: float | None = None  # seconds from the cook's start to then (api.cook sets it)

    @property
    def ok(self) -> bool:
        return not self.errors

    def explain_lines(self) -> list[dict]:
        """Why each compiled job ran: the key needing it, the reason, and the defines that differ
        from the nearest job of the same source and stage the cache already held (made once: a
        finished cook's document is asked for more than once)."""
        if self._explained is None:
            self._explained = self._explain()
        return [dict(line) for line in self._explained]

    def _explain(self) -> list[dict]:
        changed = define_changes(self.plan, self.run)
        lines = []
        for key in self.run.compiled:
            r = self.plan.jobs[key].request
            lines.append({"job": key[:12], "source": r.source, "stage": r.stage, "key": self.first_keys.get(key),
                          "key_hash": self.first_hashes.get(key),
                          "defines": dict(r.defines), "reason": self.run.reasons.get(key, ""),
                          "where": self.run.where.get(key, "local"),
                          "changed": changed.get(key, {}), "seconds": round(self.run.seconds.get(key, 0.0), 6)})
        return sorted(lines, key=lambda d: (d["source"], d["job"]))

    def changes_json(self, listed: bool = True) -> dict:
        """The change block: files written and removed, keys that appeared or vanished per chunk
        (``listed=False``: ``keys_added`` as its :class:`KeysAdded`, for a reader that iterates it)."""
        return {"written": self.written, "removed": self.removed,
                "keys_added": list(self.keys_added) if listed else self.keys_added, "keys_removed": self.keys_removed,
                "new_chunks": self.new_chunks}

    def to_json(self, listed: bool = True) -> dict:
        """The JSON document (``listed=False``: see :meth:`changes_json`)."""
        return {
            "format": JSON_FORMAT, "duration": self.duration,
            "chunks": self.chunks, "draws": self.draws, "keys": self.keys, "jobs": len(self.plan.jobs),
            "required_keys": self.keys - self.fallback_keys, "fallback_keys": self.fallback_keys,
            "stage_uses": self.stage_uses, "stages": self.plan.stage_report(), "compiled": len(self.run.compiled),
            "cache_hits": self.run.cache_hits, "cancelled": len(self.run.cancelled),
            "fetched": len(self.run.fetched), "farm": self.farm, "remote": self.remote,
            "errors": [e.to_json() for e in self.errors], "warnings": self.warnings,
            "outputs": self.outputs, "written": self.written, "removed": self.removed,
            "explain": self.explain_lines(), "explain_outputs": self.explain_outputs, "changes": self.changes_json(listed), "timing_log": self.timing_log,
        }


def cook_keys(world: World, found: CookInput, store: Store, options: CookOptions,
              progress: Progress | None = None, compiler: JobRunner | None = None, remote=None) -> CookResult:
    """Plan, compile and write outputs for the keys ``found`` (:class:`~pipeline.keys.incremental.CookInput`:
    from chunk records, or :func:`~pipeline.keys.incremental.from_keys` of a full evaluation);
    ``remote``: a shared cache tier (:class:`~pipeline.compile.shared.SharedTier`) behind ``store``."""
    families, materials_dir = world.families, world.materials_dir
    required = len(found.keys)
    fallbacks = add_fallbacks(found, families)
    progress = progress or NullProgress()
    setup = world_setup(world)  # the library and allowed roots, as the plan reads them
    tree = setup.tree()
    compiler = compiler or _compiler(options, setup, tree)
    library = compiler.library
    plan = plan_for(world, found.keys, compiler.identity, store=store, record=True, target=options.target,
                    optimize=options.optimize, tree=tree, workers=options.jobs)
    stamp = cook_stamp()
    run = run_plan(plan, store, compiler, fail_fast=options.fail_fast, progress=progress, remote=remote,
                   held=frozenset() if options.verify else held_blobs(options.out, store))
    record_use(store, plan.jobs)
    if remote is not None:
        remote.record_use(plan.jobs)
    first_both = first_keys(found.keys, plan)
    first = {job: text for job, (text, _) in first_both.items()}
    errors = scan_errors(found) + compile_errors(plan, run, library, job_users(found.keys, plan))
    result = CookResult(len(found.chunks), found.draws, len(found.keys),
                        plan.stage_uses, plan, run, errors, warnings=list(store.warnings), library=library,
                        manifest_prefix=manifest_prefix(world.root, materials_dir), first_keys=first, first_hashes={job: h for job, (_, h) in first_both.items()})
    result.fallbacks, result.fallback_keys = fallbacks, len(found.keys) - required
    result.warnings += unknown_compile_families(world.config.cook.compile, families)
    result.warnings += [f"{canonical_folder(world.root)}{d.file}: {d.message}" for d in found.diagnostics
                        if d in world.folder_warnings()]  # folder links not followed
    stats = getattr(compiler, "stats", None)
    result.farm = stats.to_json() if stats is not None and stats.workers else None
    result.warnings += getattr(compiler, "warnings", [])      # the farm: workers caught, a farm lost
    result.errors += getattr(compiler, "errors", [])          # the farm: failed audits
    if remote is not None:
        result.remote = remote.to_json()
        result.warnings += remote.warnings
    log = append_cook(store.directory, timing_rows(stamp, result)) if store.on_disk else None
    result.timing_log = str(log) if log else None
    _write_outputs(result, found, families, store, options, progress)
    return result


def _compiler(options: CookOptions, setup: JobSetup, tree: SourceTree):
    """The local process pool, or the build farm when a scheduler is configured; either reads the
    library and the folders its sources may lead to as the plan does (``setup``)."""
    runner = JobRunner(setup.materials_dir, options.backend, options.jobs, setup.allowed_roots)
    if options.scheduler:
        from pipeline.compile.farm import FarmCompiler  # imports Dask: only a farm cook pays for it
        return FarmCompiler(options.scheduler, tree, options.backend, runner.identity, audit=options.audit,
                            batch_timeout=options.farm_timeout, local=runner, connection=options.farm)
    return runner


# ------------------------------------------------------------------ outputs
def _write_outputs(result: CookResult, found: CookInput, families, store: Store, options: CookOptions,
                   progress: Progress) -> None:
    """Bring the output folder up to date, under the library's lock (:mod:`pipeline.outputs.write_library`):
    every cooked chunk's index built and staged (:func:`pipeline.outputs.write_chunk.update_chunk`), the
    shader library grown by their blobs, the indexes put in place, the outputs of chunks that no longer
    exist removed, each touched level's manifest updated (:func:`pipeline.outputs.write_level.update_level`),
    then the library settled to exactly the blobs the indexes name; what each did is merged into
    ``result``.  Under ``options.verify`` no output stamp is trusted: the library's checksum is
    checked and every index rebuilt and compared.
    Temp files left by a killed earlier cook are removed first (only those whose writing process
    is gone, so a concurrent cook's temps survive).
    """
    out = options.out
    cleanup_stale_temps(out)
    jobs = cooked_jobs(result, families)
    levels: dict[str, set[str]] = defaultdict(set)
    file_errors = errors_by_chunk(found, found.chunk_levels)
    shared, digests = shared_inputs(result.manifest_prefix), JobResults(result.plan, result.run)
    done_at: dict[str, ChunkWrite] = {}  # chunk -> what update_chunk did (its record written once in place)
    cooked: dict[str, frozenset[str]] = {}  # chunk -> the blobs of the index it built
    built: dict[str, dict] = defaultdict(dict)  # level -> chunk -> what its index gives the level
    prefetch_reflections(jobs, store, options.jobs)
    with library_lock(out):
        library, staged = Library.open(out, store, verify=options.verify), Staged()
        available = library.hashes | {r.blob for r in result.run.results.values() if r.blob}  # grow checks them
        try:
            progress.start("writing outputs", len(found.chunk_levels))
            tasks = [ChunkTask(chunk, level, found.by_chunk.get(chunk) or {}, file_errors.get(chunk, []),
                               chunk_inputs(shared, found.fingerprints.get(chunk), level, file_errors.get(chunk, []),
                                            digests.of(found.by_chunk.get(chunk) or ())))
                     for chunk, level in sorted(found.chunk_levels.items())]
            updated = update_chunks(jobs, tasks, store, out, available.__contains__, staged.write,
                                    verify=options.verify, workers=options.jobs, step=progress.advance)
            for task in tasks:
                chunk, level, done = task.chunk, task.level, updated[task.chunk]
                if isinstance(done, Exception):  # this chunk's outputs only: every other chunk still cooks
                    _stop_if_environment(done, out)
                    result.errors.append(_output_error(chunk, done))
                    continue
                _merge_chunk(result, chunk, done)
                done_at[chunk] = done
                levels[level].add(chunk)
                if done.blobs is not None:
                    cooked[chunk] = done.blobs
                    built[level][chunk] = Part(chunk, done.manifest.keys, done.manifest.pipelines,
                                               done.manifest.errors, counts=done.counts)
            progress.finish()
            library.grow(cooked)  # before the indexes naming its blobs are in place
            for chunk in sorted(c for c, blobs in cooked.items() if not blobs <= library.hashes):
                _discard(result, staged, done_at, built, cooked, out, chunk)  # a blob neither stored nor held
            staged.publish()
            result.published_at = time.perf_counter()
        finally:
            staged.abandon()
        for done in done_at.values():  # the stamps of the indexes as published
            record_outputs(store, done)
        # the indexes as published, which the sweep need not parse
        known = {str(done.json_path): (chunk, file_signature(done.json_path)) for chunk, done in done_at.items()}
        if options.sweep is not None:  # before the level manifests, which then no longer list what is gone
            result.removed = [str(p) for p in sweep_outputs(out, found.chunk_levels, options.sweep, known)]
        for level in sorted(levels):
            try:
                result.outputs.append(str(mf.level_manifest_path(out, level)))
                done = update_level(level, levels[level], store, out, verify=options.verify, built=built[level])
                if done.written:
                    result.written.append(str(done.path))
                    result.explain_outputs.append({"path": str(done.path), "level": level, "reason": done.reason})
            except (mf.ManifestError, OSError) as exc:
                _stop_if_environment(exc, out)
                result.errors.append(_output_error(level, exc))
        _settle_library(result, library, cooked)


def _discard(result: CookResult, staged: Staged, done_at: dict, built: dict, cooked: dict, out: Path,
             chunk: str) -> None:
    """Leave a chunk's index as it was on disk: its staged one names a blob the library could not take
    (neither in the store nor in the library; the library's error names the chunk)."""
    path = mf.chunk_manifest_path(out, chunk)
    staged.discard(path)
    del done_at[chunk], cooked[chunk]  # its outputs record stays as it was: the next cook writes it again
    for parts in built.values():
        parts.pop(chunk, None)
    result.written = [p for p in result.written if p != str(path)]
    result.explain_outputs = [e for e in result.explain_outputs if e["path"] != str(path)]


def _settle_library(result: CookResult, library: Library, cooked: dict[str, frozenset[str]]) -> None:
    """The library made exactly the blobs of the indexes on disk, into the cook's result."""
    try:
        library.settle(cooked)
    except OSError as exc:
        _stop_if_environment(exc, library.out)
        result.errors.append(_output_error("shader library", exc))
    result.outputs += [str(library.path), str(library.table_path)]
    if library.written:
        result.written.append(str(library.path))
        result.explain_outputs.append({"path": str(library.path), "library": True, "reason": library.reason})
    if library.table_written:
        result.written.append(str(library.table_path))
        result.explain_outputs.append({"path": str(library.table_path), "reason": library.table_reason})
    result.warnings += [w for w in library.warnings if w not in result.warnings]
    result.errors += [CookDiagnostic(Location(str(library.path)), one_line(e)) for e in library.errors]


def _merge_chunk(result: CookResult, chunk: str, done: ChunkWrite) -> None:
    """What bringing one chunk's outputs up to date did, into the cook's result."""
    result.warnings += [w for w in done.warnings if w not in result.warnings]
    result.written += done.written
    if done.written:
        record_key_changes(result, chunk, done.keys_before, done.keys)
        result.explain_outputs += [{"path": path, "chunk": chunk, "reason": done.reason} for path in done.written]
    result.outputs += done.outputs


def cooked_jobs(result: CookResult, families) -> CookedJobs:
    """What the output writers read of a cook (or dry run) result."""
    return CookedJobs(result.plan, result.run, families, result.fallbacks, lambda key: _key_errors(key, result))


# Write errors that no other chunk would escape (a full or read-only disk, no permission): one line, stop.
_ENVIRONMENT = {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EFBIG}


def _stop_if_environment(exc: Exception, out: Path) -> None:
    if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT:
        raise PipelineError.at(str(out), f"cannot write outputs: {exc.strerror or exc}") from None


def _output_error(name: str, exc: Exception) -> CookDiagnostic:
    """A chunk (or level) whose outputs cannot be written, as a located error."""
    if isinstance(exc, mf.ManifestError):
        return cook_error(None, exc.diagnostics[0])
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    file = getattr(exc, "filename", None) or name
    return CookDiagnostic(Location(str(file)), one_line(f"cannot write the outputs of {name!r}: {reason}"))


def _key_errors(key: PermutationKey, result: CookResult) -> list[dict]:
    """The located compile errors of the stage jobs ``key`` needs (or why a stage is missing)."""
    errors = []
    per_target = result.plan.targets.get(key) or {"": result.plan.jobs_for(key)}
    for stage, job_key in sorted((s, j) for stages in per_target.values() for s, j in stages.items()):
        job = result.run.results.get(job_key)
        if job_key in result.run.cancelled:
            doc = cancelled_doc(key.text, result.plan.jobs[job_key], result.library)
            errors.append(compact(doc) | {"stage": stage})
        elif job is not None and not job.ok:
            errors += [compact(compile_doc(key.text, d)) | {"stage": stage}
                       for d in job.diagnostics if d.severity == "error"]
    return [world_named(e, result.library, result.manifest_prefix) for e in errors]
