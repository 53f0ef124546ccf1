"""``pipeline cook --dry-run``: what a cook would compile, write and remove, and why, changing nothing.

The keys come from the same (incremental) path as a cook's and the jobs from the one
job plan (:mod:`pipeline.plan.setup`); each job is looked up in the cache, and a miss
gets the reason ``--explain`` gives (new key, source changed, compiler changed ...).
A chunk whose jobs are all cached is built in memory from the job records and
compared with its files on disk, as the cook compares it; a chunk with jobs to
compile would be written.  The store is opened read-only by the caller: no compile,
no record, no stamp, no output.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from pipeline.outputs.records import LEVEL_OUTPUTS, OUTPUTS, as_tuple, level_outputs_current, outputs_current
from pipeline.cache.store import Store
from pipeline.outputs import manifest as mf
from pipeline.cook.changes import first_keys
from pipeline.outputs.contract import add_fallbacks
from pipeline.cook.error_docs import compile_errors, errors_by_chunk, job_users, manifest_prefix, scan_errors
from pipeline.plan.jobs import JobPlan
from pipeline.plan.setup import plan_for
from pipeline.outputs.reflection import reflect_cached
from pipeline.outputs.chunk_build import CookedJobs, build_chunk
from pipeline.outputs.chunk_inputs import JobResults, chunk_inputs, shared_inputs
from pipeline.outputs.atomic import read_if_exists
from pipeline.outputs.pak import read_index
from pipeline.outputs.chunk_table import table_path
from pipeline.outputs.write_level import level_state
from pipeline.cook.run import CookOptions, CookResult, cooked_jobs
from pipeline.compile.scheduler import look_up
from pipeline.outputs.sweep import sweep_outputs
from pipeline.errors import CookDiagnostic
from pipeline.keys.incremental import CookInput
from pipeline.world import World


class DryRunResult(msgspec.Struct):
    """What a cook would do; ``to_json()`` is the ``pipeline cook --dry-run --json`` document."""

    chunks: int
    draws: int
    keys: int
    plan: JobPlan
    fallback_keys: int = 0                               # of ``keys``: fallbacks no draw requires
    compile: list[dict] = msgspec.field(default_factory=list)   # {job, source, stage, key, key_hash, reason}
    cached: int = 0
    write: list[dict] = msgspec.field(default_factory=list)     # {path, reason}
    remove: list[str] = msgspec.field(default_factory=list)
    errors: list[CookDiagnostic] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict:
        return {"dry_run": True, "chunks": self.chunks, "draws": self.draws, "keys": self.keys,
                "required_keys": self.keys - self.fallback_keys, "fallback_keys": self.fallback_keys,
                "jobs": len(self.plan.jobs), "stages": self.plan.stage_report(), "cached": self.cached,
                "compile": self.compile, "write": self.write, "remove": self.remove,
                "errors": [e.to_json() for e in self.errors], "warnings": self.warnings}


def dry_run(world: World, found: CookInput, store: Store, options: CookOptions, identity: str,
            library: str) -> DryRunResult:
    """What ``cook_keys`` would do with these keys, the store only read (``identity``: the compiler's;
    ``library``: the canonical folder its diagnostics name shader library files under)."""
    families = world.families
    required = len(found.keys)
    fallbacks = add_fallbacks(found, families)
    plan = plan_for(world, found.keys, identity, store=store, target=options.target, optimize=options.optimize)
    run, _ = look_up(plan.jobs, store, library)
    first = first_keys(found.keys, plan)
    result = DryRunResult(len(found.chunks), found.draws, len(found.keys), plan, len(found.keys) - required,
                          cached=len(run.results))
    for key in sorted(run.reasons, key=lambda k: (plan.jobs[k].request.source, k)):
        request = plan.jobs[key].request
        text, key_hash = first.get(key, (None, None))
        result.compile.append({"job": key[:12], "source": request.source, "stage": request.stage, "key": text,
                               "key_hash": key_hash, "reason": run.reasons[key]})
    result.errors = scan_errors(found) + compile_errors(plan, run, library, job_users(found.keys, plan))
    cook = CookResult(len(found.chunks), found.draws, len(found.keys), plan.stage_uses, plan, run, list(result.errors),
                      library=library, manifest_prefix=manifest_prefix(world.root, world.materials_dir))
    cook.fallbacks = fallbacks
    if options.sweep is not None:
        result.remove = [str(p) for p in sweep_outputs(options.out, found.chunk_levels, options.sweep, dry=True)]
    result.write = _writes(cook, found, families, store, options.out, set(result.remove))
    result.warnings = list(dict.fromkeys([*store.warnings, *cook.warnings]))
    return result


def _writes(result: CookResult, found: CookInput, families, store: Store, out: Path,
            removed: set[str]) -> list[dict]:
    """The output files a cook would write, each with why (the cook's ``--explain`` reasons); ``removed``:
    the files it would remove."""
    writes: list[dict] = []
    jobs = cooked_jobs(result, families)
    shared, digests = shared_inputs(result.manifest_prefix), JobResults(result.plan, result.run)
    file_errors = errors_by_chunk(found, found.chunk_levels)
    changed_levels, blob_sets = set(), {}
    for chunk, level in sorted(found.chunk_levels.items()):
        errors = file_errors.get(chunk, [])
        inputs = chunk_inputs(shared, found.fingerprints.get(chunk), level, errors,
                              digests.of(found.by_chunk.get(chunk) or ()))
        reason, blob_sets[chunk] = _chunk_reason(result, jobs, found, chunk, level, errors, inputs, store, out)
        if reason is not None:
            json_path = mf.chunk_manifest_path(out, chunk)
            writes.append({"path": str(json_path), "chunk": chunk, "reason": reason})
            changed_levels.add(level)
    for level in sorted(set(found.chunk_levels.values())):
        path = mf.level_manifest_path(out, level)
        if level in changed_levels or not path.exists():
            record = as_tuple(store.get(LEVEL_OUTPUTS, str(path.resolve())))
            reason = level_outputs_current(record, level_state(out, level), path) if not path.exists() else None
            writes.append({"path": str(path), "chunk": None, "reason": reason or "inputs changed: chunk manifests"})
    reason, table_reason = _library_reason(result, out, blob_sets, removed)
    if reason is not None:
        writes.append({"path": str(mf.library_path(out)), "chunk": None, "library": True, "reason": reason})
    if table_reason is not None:
        writes.append({"path": str(table_path(mf.library_path(out))), "chunk": None, "reason": table_reason})
    return writes


def _library_reason(result: CookResult, out: Path, blob_sets: dict, removed: set[str]) -> tuple[str | None, str | None]:
    """Why the cook would write the shader library, and why its chunk table (None: it would not): a blob
    to add or drop (both), a chunk entering or leaving the table or its blobs changing (the table).
    ``blob_sets``: chunk -> its index's blobs (None: left as it is on disk; ``UNKNOWN``: to be seen once
    its jobs compile)."""
    library = mf.library_path(out)
    table_file = table_path(library)
    with_library = "new" if not table_file.exists() else f"{library.name} written"  # the table's reason then
    held = read_index(library)
    if held is None:
        return ("new" if not library.exists() else "modified on disk: shaders.pak"), with_library
    hashes, on_disk = held
    if result.run.reasons or any(blobs is UNKNOWN for blobs in blob_sets.values()):
        return "blobs of the chunk indexes change", with_library
    if on_disk is None:  # the indexes are read for their blobs: what they name is not known here
        return None, f"missing, or written for another library: {table_file.name}"
    table = {c: b for c, b in on_disk.items() if str(mf.chunk_manifest_path(out, c)) not in removed}
    table.update({c: b for c, b in blob_sets.items() if b is not None})
    if frozenset().union(*table.values()) != hashes:
        return "blobs of the chunk indexes change", with_library
    return None, "chunks' blobs changed" if table != on_disk else None


UNKNOWN = frozenset({"?"})  # an index whose blobs are known only once its jobs compile


def _chunk_reason(result: CookResult, jobs: CookedJobs, found: CookInput, chunk: str, level: str,
                  errors: list[dict], inputs, store: Store, out: Path) -> tuple[str | None, frozenset | None]:
    """Why the chunk's index would be written (None when it is exactly right), and the blobs it would
    name (None: the index stays as it is; :data:`UNKNOWN`: not known without compiling)."""
    required = found.by_chunk.get(chunk) or {}
    missing = {job for key in required for job in result.plan.all_jobs_for(key)} & set(result.run.reasons)
    json_path = mf.chunk_manifest_path(out, chunk)
    reason = outputs_current(as_tuple(store.get(OUTPUTS, str(json_path.resolve()))), inputs, json_path)
    if reason is None:
        return None, None  # the cook's own record: inputs and files unchanged
    if not json_path.exists():
        return reason, UNKNOWN  # new: it enters the library's chunk table
    if missing:
        return f"{reason}; {len(missing)} job{'s' if len(missing) != 1 else ''} to compile " \
               "(rewritten if a blob changes)", UNKNOWN

    def reflection(digest: str) -> dict:
        return reflect_cached(store, digest, store.get_blob)

    built = build_chunk(jobs, chunk, level, required, errors, lambda digest: True, reflection)
    result.warnings += [w for w in built.warnings if w not in result.warnings]
    same = read_if_exists(json_path) == mf.dump_json(built.manifest.to_json())
    return None if same else reason, mf.stage_hashes(built.manifest)
