"""The cook: required keys -> stage jobs -> cache / compile -> per-chunk outputs.

Outputs are written chunk by chunk with :mod:`pipeline.cook.manifest` (atomic, and a
file whose bytes would not change is not rewritten), then each touched level's
union manifest is rebuilt from the chunk manifests on disk, so cooking one chunk
keeps its level manifest whole.
"""

from __future__ import annotations

import os
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.cache.output_records import LEVEL_OUTPUTS, OUTPUTS
from pipeline.cache.store import Store
from pipeline.cache.use_records import record_use
from pipeline.cook import manifest as mf
from pipeline.cook.atomic import cleanup_stale_temps, locked
from pipeline.cook.compile import SourceTree
from pipeline.cook.contract import ContractBuilder, add_fallbacks, bindings_by_pass
from pipeline.cook.reflection import reflect_cached
from pipeline.cook.jobs import JobOptions, JobPlan, plan_jobs
from pipeline.cook.scheduler import JobRunner, RunResult, run_plan
from pipeline.cook.timings import append_cook, cook_stamp
from pipeline.digest import code_hash, stable_hash
from pipeline.errors import Diagnostic, Location
from pipeline.keys.incremental import CookInput, KeyUses, from_keys
from pipeline.keys.key import PermutationKey
from pipeline.progress import NullProgress, Progress
from pipeline.world import World


@dataclass(frozen=True)
class CookOptions:
    out: Path = Path("build")
    jobs: int = 1
    backend: str = "capi"
    fail_fast: bool = False
    optimize: bool = False
    target: str = "vulkan1.2"
    scheduler: str | None = None  # a Dask scheduler address or local:N (pipeline.cook.farm); None: this machine


@dataclass
class CookResult:
    """What a cook did; ``to_json()`` is the ``pipeline cook --json`` document."""

    chunks: int
    draws: int
    keys: int
    stage_uses: int
    plan: JobPlan
    run: RunResult
    errors: list[dict] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)   # every output file of the cooked chunks
    written: list[str] = field(default_factory=list)   # those rewritten by this cook
    warnings: list[str] = field(default_factory=list)
    fallbacks: dict[str, dict[str, str]] = field(default_factory=dict)  # chunk -> shader/pass -> fallback key
    display_prefix: str = "materials/"                   # how errors name the shader library
    farm: dict | None = None                             # what the build farm measured (FarmStats)
    remote: dict | None = None                           # what the shared cache tier did
    keys_added: list[tuple[str, str]] = field(default_factory=list)    # (chunk, key) new in a rewritten manifest
    keys_removed: list[tuple[str, str]] = field(default_factory=list)  # (chunk, key) gone from it
    new_chunks: list[str] = field(default_factory=list)                # chunks with no manifest before
    first_keys: dict[str, str] = field(default_factory=dict)           # job key -> first key (by text) needing it
    timing_log: str | None = None                                      # where this cook's job times went

    @property
    def ok(self) -> bool:
        return not self.errors

    def explain_lines(self) -> list[dict]:
        """Why each compiled job ran: the key needing it, the reason, and the defines that differ
        from the nearest job of the same source and stage the cache already held."""
        changed = _define_changes(self.plan, self.run)
        lines = []
        for key in self.run.compiled:
            r = self.plan.jobs[key].request
            lines.append({"job": key[:12], "source": r.source, "stage": r.stage, "key": self.first_keys.get(key),
                          "defines": dict(r.defines), "reason": self.run.reasons.get(key, ""),
                          "where": self.run.where.get(key, "local"),
                          "changed": changed.get(key, {}), "seconds": round(self.run.seconds.get(key, 0.0), 6)})
        return sorted(lines, key=lambda d: (d["source"], d["job"]))

    def changes_json(self) -> dict:
        """The change block: files written, keys that appeared or vanished per chunk."""
        return {"written": self.written,
                "keys_added": [{"chunk": c, "key": k} for c, k in self.keys_added],
                "keys_removed": [{"chunk": c, "key": k} for c, k in self.keys_removed],
                "new_chunks": self.new_chunks}

    def to_json(self) -> dict:
        return {
            "chunks": self.chunks, "draws": self.draws, "keys": self.keys, "jobs": len(self.plan.jobs),
            "stage_uses": self.stage_uses, "stages": self.plan.stage_report(), "compiled": len(self.run.compiled),
            "cache_hits": self.run.cache_hits, "cancelled": len(self.run.cancelled),
            "fetched": len(self.run.fetched), "farm": self.farm, "remote": self.remote,
            "errors": self.errors, "warnings": self.warnings,
            "outputs": self.outputs, "written": self.written, "explain": self.explain_lines(),
            "changes": self.changes_json(), "timing_log": self.timing_log,
        }


def display_prefix(materials_dir: Path) -> str:
    """How compile errors name the shader library: relative to the working directory when inside it."""
    path = materials_dir.resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve())) + "/"
    except ValueError:
        return str(path) + "/"


def cook_keys(world: World, found, store: Store, options: CookOptions,
              progress: Progress | None = None, compiler: JobRunner | None = None, remote=None) -> CookResult:
    """Plan, compile and write outputs for the keys ``found`` (an ``api.KeysResult`` or a
    :class:`~pipeline.keys.incremental.CookInput`); ``remote``: a shared cache tier
    (:class:`~pipeline.cook.shared.SharedTier`) behind ``store``."""
    families, materials_dir = world.families, world.materials_dir
    found = found if isinstance(found, CookInput) else from_keys(found, world)
    fallbacks = add_fallbacks(found, families)
    progress = progress or NullProgress()
    prefix = compiler.display_prefix if compiler is not None else display_prefix(materials_dir)
    tree = SourceTree(materials_dir, prefix)
    compiler = compiler or _compiler(options, materials_dir, tree)
    job_options = JobOptions(options.target, options.optimize, compiler.identity)
    plan = plan_jobs(found.keys, families, tree, job_options)
    stamp = cook_stamp()
    run = run_plan(plan, store, compiler, fail_fast=options.fail_fast, progress=progress, remote=remote)
    record_use(store, plan.jobs)
    if remote is not None:
        remote.record_use(plan.jobs)
    first = _first_keys(found.keys, plan)
    errors = _scan_errors(found) + _compile_errors(plan, run, prefix, first)
    result = CookResult(len(found.chunks), found.draws, len(found.keys),
                        plan.stage_uses, plan, run, errors, warnings=list(store.warnings), display_prefix=prefix,
                        first_keys=first)
    result.fallbacks = fallbacks
    stats = getattr(compiler, "stats", None)
    result.farm = stats.to_json() if stats is not None and stats.workers else None
    if remote is not None:
        result.remote = remote.to_json()
        result.warnings += remote.warnings
    log = append_cook(store.directory, _timing_rows(stamp, result)) if store.on_disk else None
    result.timing_log = str(log) if log else None
    _write_outputs(result, found, families, store, options.out, progress)
    return result


def _compiler(options: CookOptions, materials_dir: Path, tree: SourceTree):
    """The local process pool, or the build farm when a scheduler is configured."""
    runner = JobRunner(materials_dir, options.backend, options.jobs, tree.display_prefix)
    if options.scheduler:
        from pipeline.cook.farm import FarmCompiler  # imports Dask: only a farm cook pays for it
        return FarmCompiler(options.scheduler, tree, options.backend, runner.identity)
    return runner


def _timing_rows(stamp: str, result: CookResult) -> list[dict]:
    rows = []
    for job_key in result.run.compiled:
        request = result.plan.jobs[job_key].request
        key = result.first_keys.get(job_key)
        job = result.run.results.get(job_key)
        rows.append({"cook": stamp, "job": job_key, "key": key, "family": key.split("/", 1)[0] if key else None,
                     "source": request.source, "stage": request.stage,
                     "seconds": round(result.run.seconds.get(job_key, 0.0), 6), "ok": bool(job and job.ok)})
    return rows


def _define_changes(plan: JobPlan, run: RunResult) -> dict[str, dict[str, list]]:
    """For each compiled job, ``{define: [cached value, new value]}`` against the cached job of the
    same source and stage with the fewest differing defines (none cached: no entry)."""
    compiled = set(run.compiled)
    cached: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for job_key, job in plan.jobs.items():
        if job_key not in compiled and job_key in run.results:
            cached[(job.request.source, job.request.stage)].append(dict(job.request.defines))
    changes = {}
    for job_key in compiled:
        request = plan.jobs[job_key].request
        new = dict(request.defines)
        best = None
        for old in cached.get((request.source, request.stage), ())[:5000]:
            diff = {n: [old.get(n), new.get(n)] for n in sorted(set(old) | set(new)) if old.get(n) != new.get(n)}
            if best is None or len(diff) < len(best):
                best = diff
        if best:
            changes[job_key] = best
    return changes


# ------------------------------------------------------------------ errors
def _scan_errors(found: CookInput) -> list[dict]:
    return [_error_doc(None, d) for d in found.diagnostics if d.severity == "error"]


def _error_doc(key: str | None, d: Diagnostic) -> dict:
    """A diagnostic's one JSON shape, plus the key whose job reported it (None for scan and rule errors)."""
    return d.to_json() | {"key": key}


def _first_keys(keys, plan: JobPlan) -> dict[str, str]:
    """Job key -> the first key (by text) that needs the job."""
    first_key: dict[str, str] = {}
    for key in sorted(keys, key=lambda k: k.text):
        for job_key in plan.jobs_for(key).values():
            first_key.setdefault(job_key, key.text)
    return first_key


def _compile_errors(plan: JobPlan, run: RunResult, prefix: str, first_key: dict[str, str]) -> list[dict]:
    """One error per (job diagnostic), naming the first key (by text) that needs the job."""
    errors = []
    for job_key, result in sorted(run.results.items()):
        errors += [_error_doc(first_key.get(job_key), d) for d in result.diagnostics if d.severity == "error"]
    for job_key in run.cancelled:
        errors.append(_cancelled_doc(first_key.get(job_key), plan.jobs[job_key], prefix))
    return errors


def _cancelled_doc(key: str | None, job, prefix: str) -> dict:
    return _error_doc(key, Diagnostic(Location(prefix + job.request.source), "not compiled: stopped by --fail-fast"))


def _compact(doc: dict) -> dict:
    """An error as a manifest stores it: without the empty fields (every manifest error is an error)."""
    return {k: v for k, v in doc.items() if v is not None and k != "severity"}


# ------------------------------------------------------------------ outputs
def _write_outputs(result: CookResult, found: CookInput, families, store: Store, out: Path, progress: Progress) -> None:
    """Write every cooked chunk's .pak and .json, then each touched level's union manifest.

    Nothing is rebuilt for a chunk whose inputs (its chunk record, the job results,
    its errors) and output files (mtime, size, inode) are those this tool last
    wrote or checked.  Otherwise its manifest is built from the job records (no blob
    read), and when the files on disk already are those outputs (manifest bytes
    equal, .pak index equal and the .pak untouched since) the chunk is done; else
    its blobs are read from the store and both files written as needed.  A level
    manifest is rebuilt only when a chunk manifest of its folder (or itself)
    changed on disk.  Temp files left by a killed earlier cook are removed first
    (only those whose writing process is gone, so a concurrent cook's temps survive).
    """
    cleanup_stale_temps(out)
    levels: dict[str, set[str]] = defaultdict(set)
    chunk_levels = found.chunk_levels
    file_errors = _errors_by_chunk(found, chunk_levels)
    results = _results_digest(result)
    blobs: dict[str, bytes | None] = {}  # read once per cook, shared by the chunks
    progress.start("writing outputs", len(chunk_levels))
    for chunk, level in sorted(chunk_levels.items()):
        errors = file_errors.get(chunk, [])
        paths = (mf.chunk_manifest_path(out, chunk), mf.chunk_pak_path(out, chunk))
        result.outputs += [str(p) for p in paths]
        fingerprint = found.fingerprints.get(chunk)
        digest = _chunk_digest(results, fingerprint, chunk, level, errors) if fingerprint else None
        record = store.get(OUTPUTS, str(paths[0].resolve()))
        if digest is None or record != [digest, *map(_stat_of, paths)]:
            _write_chunk(result, chunk, level, found.by_chunk.get(chunk) or {}, families, errors, store, out,
                         blobs, record)
            new = [digest, *map(_stat_of, paths)]
            if new != record:
                store.set(OUTPUTS, str(paths[0].resolve()), new)
        levels[level].add(chunk)
        progress.advance()
    progress.finish()
    for level in sorted(levels):
        path = mf.level_manifest_path(out, level)
        result.outputs.append(str(path))
        with locked(path.parent):  # another cook may be rebuilding this level manifest
            chunks_state = _level_state(out, level)  # taken before reading: a later change is seen next time
            if store.get(LEVEL_OUTPUTS, str(path.resolve())) == [chunks_state, _stat_of(path)]:
                continue
            if mf.write_level_manifest(out, mf.level_manifest(level, _level_chunks(out, level), levels[level])):
                result.written.append(str(path))
            store.set(LEVEL_OUTPUTS, str(path.resolve()), [chunks_state, _stat_of(path)])


def _write_chunk(result: CookResult, chunk: str, level: str, required: dict, families, errors: list[dict],
                 store: Store, out: Path, blobs: dict, record) -> None:
    """Build one chunk's manifest; write its files unless they are already exactly those outputs."""
    def reflection(digest: str) -> dict:
        return reflect_cached(store, digest, lambda d: blobs[d] if blobs.get(d) else store.get_blob(d))

    manifest = _chunk_manifest(chunk, level, required, result, families, errors, lambda digest: True, reflection)
    pak_stat = _stat_of(mf.chunk_pak_path(out, chunk))
    if isinstance(record, list) and len(record) == 3 and record[2] == pak_stat is not None \
            and mf.chunk_outputs_current(out, manifest):
        return  # the .pak is untouched since last written or compared, and indexes exactly these blobs
    for digest in mf.stage_hashes(manifest) - set(blobs):
        blobs[digest] = store.get_blob(digest)
    if any(blobs[digest] is None for digest in mf.stage_hashes(manifest)):  # gone since the run
        manifest = _chunk_manifest(chunk, level, required, result, families, errors,
                                   lambda digest: blobs.get(digest) is not None, reflection)
    needed = {digest: blobs[digest] for digest in mf.stage_hashes(manifest)}
    before = _manifest_keys(mf.chunk_manifest_path(out, chunk))
    written = mf.write_chunk_outputs(out, manifest, needed)
    result.written += [str(p) for p in written]
    if written and before is None:
        result.new_chunks.append(chunk)
    if written:
        before = before or set()
        now = set(manifest.keys)
        result.keys_added += [(chunk, k) for k in sorted(now - before)]
        result.keys_removed += [(chunk, k) for k in sorted(before - now)]


def _manifest_keys(path: Path) -> set[str] | None:
    """The keys of the chunk manifest on disk (None when missing or unreadable)."""
    if not path.is_file():
        return None
    try:
        return set(mf.load_chunk_manifest(path).keys)
    except mf.ManifestError:
        return None


OUTPUTS_VERSION = 1  # what the outputs-unchanged digest covers


def _results_digest(result: CookResult) -> str:
    """What every chunk's outputs depend on besides its own keys: the job mapping and results."""
    doc = [OUTPUTS_VERSION, mf.FORMAT_VERSION, _code_hash(), result.display_prefix,
           sorted((key.text, sorted(stages.items())) for key, stages in result.plan.stages.items()),
           sorted((k, r.blob, [d.to_json() for d in r.diagnostics]) for k, r in result.run.results.items()),
           sorted(result.run.cancelled)]
    return stable_hash(doc)


def _chunk_digest(results: str, fingerprint: str, chunk: str, level: str, errors: list[dict]) -> str:
    return stable_hash([results, fingerprint, chunk, level, errors])


def _code_hash() -> str:
    """The source of the modules that write outputs: a change there rebuilds every output once."""
    return code_hash("cook/run.py", "cook/manifest.py", "cook/pak.py", "cook/contract.py", "cook/reflection.py")


def _level_state(out: Path, level: str) -> str:
    """Stats of every chunk manifest a rebuild of the level manifest reads (itself excluded)."""
    folder = out / level
    own = mf.level_manifest_path(out, level)
    files = sorted(p for p in folder.rglob("*.json") if p != own) if folder.is_dir() else []
    return stable_hash([(str(p), _stat_of(p)) for p in files])


def _stat_of(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _errors_by_chunk(found, chunk_levels: dict[str, str]) -> dict[str, list[dict]]:
    """Scan and rule errors by the chunk folder holding their file (grid cells get none)."""
    by_chunk: dict[str, list[dict]] = defaultdict(list)
    for d in found.diagnostics:
        folder = posixpath.dirname(d.location.file) or "."
        if d.severity == "error" and folder in chunk_levels:
            by_chunk[folder].append(_compact(_error_doc(None, d)))
    return by_chunk


def _key_errors(key: PermutationKey, result: CookResult) -> list[dict]:
    """The located compile errors of the stage jobs ``key`` needs (or why a stage is missing)."""
    errors = []
    for stage, job_key in sorted(result.plan.jobs_for(key).items()):
        job = result.run.results.get(job_key)
        if job_key in result.run.cancelled:
            doc = _cancelled_doc(key.text, result.plan.jobs[job_key], result.display_prefix)
            errors.append(_compact(doc) | {"stage": stage})
        elif job is not None and not job.ok:
            errors += [_compact(_error_doc(key.text, d)) | {"stage": stage}
                       for d in job.diagnostics if d.severity == "error"]
    return errors


def _chunk_manifest(chunk: str, level: str, required: dict[PermutationKey, KeyUses], result: CookResult, families,
                    file_errors: list[dict], has_blob, reflection) -> mf.ChunkManifest:
    """The chunk's manifest from the job records; a stage whose blob ``has_blob`` denies is left out (an error).
    ``reflection(digest)`` gives a blob's reflection, for the runtime contract (:mod:`pipeline.cook.contract`)."""
    entries, errors = [], list(file_errors)
    contract = ContractBuilder(reflection, families)
    fallbacks = result.fallbacks.get(chunk, {})
    fallback_stages = {}
    for key, info in sorted(required.items(), key=lambda kv: kv[0].text):
        stages = {}
        jobs = result.plan.jobs_for(key)
        for stage, job_key in sorted(jobs.items()):
            job = result.run.results.get(job_key)
            if job is not None and job.blob and has_blob(job.blob):
                stages[stage] = job.blob
        entries.append(_entry(key, info, stages, families[key.shader]))
        contract.add_key(key, stages, info.bindings)
        if fallbacks.get(f"{key.shader}/{key.pass_name}") == key.text:
            fallback_stages[key] = stages
        if len(stages) < len(jobs):
            missing = {"key": key.text, "message": "a stage blob is missing from the cache"}
            errors += _key_errors(key, result) or [missing]
    by_pass = bindings_by_pass(required)
    for key, stages in fallback_stages.items():
        contract.add_fallback(key, stages, by_pass)
    result.warnings += [w for w in dict.fromkeys(contract.warnings) if w not in result.warnings]
    return mf.chunk_manifest(chunk, level, entries, errors, draws=contract.draw_list(), pipelines=contract.pipelines,
                             reflection=contract.blobs, fallbacks=fallbacks)


def _entry(key: PermutationKey, info: KeyUses, stages: dict[str, str], ruleset) -> mf.ManifestEntry:
    spec = {name: mf.SpecConstant(ruleset.features[name].constant_id, tuple(values))
            for name, values in info.specialization.items()}
    return mf.ManifestEntry(key=key.text, hash=key.hash, shader=key.shader, pass_name=key.pass_name,
                            features=dict(key.features), stages=stages, draws=info.draws,
                            render_states=tuple(info.render_states), specialization=spec)


def _level_chunks(out: Path, level: str) -> list[mf.ChunkManifest]:
    """Every chunk manifest of ``level`` on disk (this cook's and earlier ones)."""
    folder = out / level
    manifests = []
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
        try:
            manifest = mf.load_chunk_manifest(path)
        except mf.ManifestError:
            continue
        if manifest.level == level:
            manifests.append(manifest)
    return manifests
