"""The cook: required keys -> stage jobs -> cache / compile -> per-chunk outputs.

Outputs are written chunk by chunk with :mod:`pipeline.outputs.manifest` (atomic, and a
file whose bytes would not change is not rewritten), then each touched level's
union manifest is rebuilt from the chunk manifests on disk, so cooking one chunk
keeps its level manifest whole.
"""

from __future__ import annotations

import errno
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.outputs.records import (
    LEVEL_OUTPUTS,
    OUTPUTS,
    as_tuple,
    outputs_current,
    outputs_entry,
    record_ok,
    stat_of,
)
from pipeline.cache.store import Store
from pipeline.cache.use_records import record_use
from pipeline.outputs import manifest as mf
from pipeline.outputs.atomic import cleanup_stale_temps, locked
from pipeline.cook.changes import (
    define_changes,
    first_keys,
    manifest_keys,
    record_key_changes,
)
from pipeline.compilers import SourceTree
from pipeline.outputs.contract import ContractBuilder, add_fallbacks, bindings_by_pass
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
from pipeline.plan.jobs import JobPlan, blobs_of, unknown_compile_families
from pipeline.plan.setup import JobSetup, plan_jobs, record_exact, world_setup
from pipeline.outputs.reflection import prefetch as reflection_prefetch
from pipeline.outputs.reflection import reflect_cached
from pipeline.compile.scheduler import JobRunner, RunResult, run_plan
from pipeline.outputs.sweep import file_signature, level_files, sweep_outputs
from pipeline.cook.timings import append_cook, cook_stamp, timing_rows
from pipeline.digest import code_hash, stable_hash
from pipeline.errors import CookDiagnostic, Location, PipelineError, canonical_folder, one_line
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
    allowed_roots: tuple[Path, ...] = ()  # folders outside materials that sources may lead to
    sweep: str | None = None  # remove outputs of chunks that no longer exist: "" whole world, else a level
    scheduler: str | None = None  # a Dask scheduler address or local:N (pipeline.compile.farm); None: this machine
    audit: float = 0.0            # percent of farm results recompiled here and compared (pipeline.compile.farm_trust)
    farm_timeout: float | None = None  # seconds a farm batch may take at least (None: the farm's default)


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
    keys_added: list[dict] = field(default_factory=list)    # {chunk, key, hash, nearest} new in a rewritten manifest
    keys_removed: list[dict] = field(default_factory=list)  # {chunk, key, hash} gone from it
    new_chunks: list[str] = field(default_factory=list)                # chunks with no manifest before
    first_keys: dict[str, str] = field(default_factory=dict)           # job key -> first key (by text) needing it
    first_hashes: dict[str, str] = field(default_factory=dict)         # job key -> that key's hash
    timing_log: str | None = None                                      # where this cook's job times went
    duration: float | None = None                                      # seconds of wall time (api.cook sets it)

    @property
    def ok(self) -> bool:
        return not self.errors

    def explain_lines(self) -> list[dict]:
        """Why each compiled job ran: the key needing it, the reason, and the defines that differ
        from the nearest job of the same source and stage the cache already held."""
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

    def changes_json(self) -> dict:
        """The change block: files written and removed, keys that appeared or vanished per chunk."""
        return {"written": self.written, "removed": self.removed,
                "keys_added": self.keys_added, "keys_removed": self.keys_removed,
                "new_chunks": self.new_chunks}

    def to_json(self) -> dict:
        return {
            "format": JSON_FORMAT, "duration": self.duration,
            "chunks": self.chunks, "draws": self.draws, "keys": self.keys, "jobs": len(self.plan.jobs),
            "required_keys": self.keys - self.fallback_keys, "fallback_keys": self.fallback_keys,
            "stage_uses": self.stage_uses, "stages": self.plan.stage_report(), "compiled": len(self.run.compiled),
            "cache_hits": self.run.cache_hits, "cancelled": len(self.run.cancelled),
            "fetched": len(self.run.fetched), "farm": self.farm, "remote": self.remote,
            "errors": [e.to_json() for e in self.errors], "warnings": self.warnings,
            "outputs": self.outputs, "written": self.written, "removed": self.removed,
            "explain": self.explain_lines(), "changes": self.changes_json(), "timing_log": self.timing_log,
        }


def cook_keys(world: World, found, store: Store, options: CookOptions,
              progress: Progress | None = None, compiler: JobRunner | None = None, remote=None) -> CookResult:
    """Plan, compile and write outputs for the keys ``found`` (an ``api.KeysResult`` or a
    :class:`~pipeline.keys.incremental.CookInput`); ``remote``: a shared cache tier
    (:class:`~pipeline.compile.shared.SharedTier`) behind ``store``."""
    families, materials_dir = world.families, world.materials_dir
    found = found if isinstance(found, CookInput) else from_keys(found, world)
    required = len(found.keys)
    fallbacks = add_fallbacks(found, families)
    progress = progress or NullProgress()
    tree = cook_setup(world, options).tree()
    compiler = compiler or _compiler(options, materials_dir, tree)
    library = compiler.library
    setup = cook_setup(world, options, compiler.identity)
    plan = plan_jobs(setup, found.keys, store, tree)
    record_exact(store, setup, plan)
    stamp = cook_stamp()
    run = run_plan(plan, store, compiler, fail_fast=options.fail_fast, progress=progress, remote=remote)
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


def cook_setup(world: World, options: CookOptions, identity: str = "") -> JobSetup:
    """The job setup of a cook with these options (the world's, with the cook's target and roots)."""
    return replace(world_setup(world, identity, target=options.target, optimize=options.optimize),
                   allowed_roots=options.allowed_roots)


def _compiler(options: CookOptions, materials_dir: Path, tree: SourceTree):
    """The local process pool, or the build farm when a scheduler is configured."""
    runner = JobRunner(materials_dir, options.backend, options.jobs, options.allowed_roots)
    if options.scheduler:
        from pipeline.compile.farm import FarmCompiler  # imports Dask: only a farm cook pays for it
        return FarmCompiler(options.scheduler, tree, options.backend, runner.identity, audit=options.audit,
                            batch_timeout=options.farm_timeout, local=runner)
    return runner


# ------------------------------------------------------------------ outputs
def _write_outputs(result: CookResult, found: CookInput, families, store: Store, options: CookOptions,
                   progress: Progress) -> None:
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
    out = options.out
    cleanup_stale_temps(out)
    levels: dict[str, set[str]] = defaultdict(set)
    chunk_levels = found.chunk_levels
    file_errors = errors_by_chunk(found, chunk_levels)
    results = _results_digest(result)
    blobs: dict[str, bytes | None] = {}  # read once per cook, shared by the chunks
    known: dict[str, tuple] = {}  # manifests written or checked here, which the sweep need not parse
    _prefetch_reflections(result, store, options.jobs, blobs)
    progress.start("writing outputs", len(chunk_levels))
    for chunk, level in sorted(chunk_levels.items()):
        try:
            json_path, pak = _chunk_outputs(result, found, chunk, level, file_errors.get(chunk, []), families, store,
                                            out, results, blobs)
            known[str(json_path)] = (chunk, pak, file_signature(json_path))
            levels[level].add(chunk)
        except (mf.ManifestError, OSError) as exc:  # this chunk's outputs only: every other chunk still cooks
            _stop_if_environment(exc, out)
            result.errors.append(_output_error(chunk, exc))
        progress.advance()
    progress.finish()
    if options.sweep is not None:  # before the level manifests, which then no longer list what is gone
        result.removed = [str(p) for p in sweep_outputs(out, found.chunk_levels, options.sweep, known)]
    for level in sorted(levels):
        try:
            _level_outputs(result, level, levels[level], store, out)
        except (mf.ManifestError, OSError) as exc:
            _stop_if_environment(exc, out)
            result.errors.append(_output_error(level, exc))


def _prefetch_reflections(result: CookResult, store: Store, jobs: int, blobs: dict[str, bytes | None]) -> None:
    """The runtime contract reflects every Vulkan blob; those new to this cook are reflected in parallel
    first.  The blobs read for it stay in ``blobs``, where the chunks' .pak writing finds them."""
    def load(digest: str) -> bytes | None:
        if digest not in blobs:
            blobs[digest] = store.get_blob(digest)
        return blobs[digest]

    digests = [r.blob for key in [*result.run.compiled, *result.run.fetched]
               if (r := result.run.results.get(key)) is not None and r.blob
               and result.plan.jobs[key].request.target.startswith("vulkan")]
    if digests:
        reflection_prefetch(store, digests, load, jobs)


def _chunk_outputs(result: CookResult, found: CookInput, chunk: str, level: str, errors: list[dict], families,
                   store: Store, out: Path, results: bytes, blobs: dict) -> tuple[Path, str]:
    """Bring one chunk's .json and .pak up to date (nothing is rebuilt when the record says they are);
    returns the manifest's path and the pak it names."""
    json_path = mf.chunk_manifest_path(out, chunk)
    fingerprint = found.fingerprints.get(chunk)
    digest = _chunk_digest(results, fingerprint, chunk, level, errors) if fingerprint else None
    record = as_tuple(store.get(OUTPUTS, str(json_path.resolve())))
    pak_name = record[2] if record_ok(record) else None
    if not outputs_current(record, digest, json_path):
        manifest = _write_chunk(result, chunk, level, found.by_chunk.get(chunk) or {}, families, errors, store, out,
                                blobs, record)
        pak_name = manifest.pak
        new = outputs_entry(digest, json_path, pak_name)
        if as_tuple(new) != record:
            store.set(OUTPUTS, str(json_path.resolve()), new)
    result.outputs += [str(json_path), str(json_path.with_name(pak_name))]
    return json_path, pak_name


def _level_outputs(result: CookResult, level: str, fresh: set[str], store: Store, out: Path) -> None:
    path = mf.level_manifest_path(out, level)
    result.outputs.append(str(path))
    with locked(path.parent):  # another cook may be rebuilding this level manifest
        chunks_state = _level_state(out, level)  # taken before reading: a later change is seen next time
        if as_tuple(store.get(LEVEL_OUTPUTS, str(path.resolve()))) == as_tuple([chunks_state, stat_of(path)]):
            return
        if mf.write_level_manifest(out, mf.level_manifest(level, _level_chunks(out, level), fresh)):
            result.written.append(str(path))
        store.set(LEVEL_OUTPUTS, str(path.resolve()), [chunks_state, stat_of(path)])


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


def _write_chunk(result: CookResult, chunk: str, level: str, required: dict, families, errors: list[dict],
                 store: Store, out: Path, blobs: dict, record) -> mf.ChunkManifest:
    """Build one chunk's manifest; write its files unless they are already exactly those outputs."""
    def reflection(digest: str) -> dict:
        return reflect_cached(store, digest, lambda d: blobs[d] if blobs.get(d) else store.get_blob(d))

    manifest = _chunk_manifest(chunk, level, required, result, families, errors, lambda digest: True, reflection)
    pak_stat = stat_of(mf.chunk_pak_path(out, manifest))
    if record_ok(record) and record[2] == manifest.pak and record[3] == as_tuple(pak_stat) is not None \
            and mf.chunk_outputs_current(out, manifest):
        return manifest  # the .pak is untouched since last written or compared, and indexes exactly these blobs
    for digest in mf.stage_hashes(manifest) - set(blobs):
        blobs[digest] = store.get_blob(digest)
    if any(blobs[digest] is None for digest in mf.stage_hashes(manifest)):  # gone since the run
        manifest = _chunk_manifest(chunk, level, required, result, families, errors,
                                   lambda digest: blobs.get(digest) is not None, reflection)
    needed = {digest: blobs[digest] for digest in mf.stage_hashes(manifest)}
    before = manifest_keys(mf.chunk_manifest_path(out, chunk))
    written = mf.write_chunk_outputs(out, manifest, needed)
    result.written += [str(p) for p in written]
    if written:
        record_key_changes(result, chunk, before, manifest.keys)
    return manifest


OUTPUTS_VERSION = 1  # what the outputs-unchanged digest covers


def _results_digest(result: CookResult) -> str:
    """What every chunk's outputs depend on besides its own keys: the job mapping and results."""
    doc = [OUTPUTS_VERSION, mf.FORMAT_VERSION, _code_hash(), result.manifest_prefix,
           sorted((key.text, sorted(stages.items())) for key, stages in result.plan.stages.items()),
           sorted((k, r.blob, [d.to_json() for d in r.diagnostics]) for k, r in result.run.results.items()),
           sorted(result.run.cancelled)]
    return stable_hash(doc)


def _chunk_digest(results: str, fingerprint: str, chunk: str, level: str, errors: list[dict]) -> str:
    return stable_hash([results, fingerprint, chunk, level, errors])


def _code_hash() -> str:
    """The source of the modules that write outputs: a change there rebuilds every output once."""
    return code_hash("cook/run.py", "cook/error_docs.py", "outputs/manifest.py", "outputs/pak.py", "outputs/contract.py",
                     "outputs/reflection.py")


def _level_state(out: Path, level: str) -> str:
    """Stats of every chunk manifest a rebuild of the level manifest reads (itself excluded)."""
    files = level_files(out, level)
    return stable_hash([(str(p), stat_of(p)) for p in files])


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


def _chunk_manifest(chunk: str, level: str, required: dict[PermutationKey, KeyUses], result: CookResult, families,
                    file_errors: list[dict], has_blob, reflection) -> mf.ChunkManifest:
    """The chunk's manifest from the job records; a stage whose blob ``has_blob`` denies is left out (an error).
    ``reflection(digest)`` gives a blob's reflection, for the runtime contract (:mod:`pipeline.outputs.contract`)."""
    entries, errors = [], list(file_errors)
    contract = ContractBuilder(reflection, families)
    fallbacks = result.fallbacks.get(chunk, {})
    fallback_stages = {}
    for key, info in sorted(required.items(), key=lambda kv: kv[0].text):
        jobs = result.plan.jobs_for(key)
        stages = blobs_of(jobs, result.run.results, has_blob)
        per_target = result.plan.targets.get(key)
        targets = {label: blobs_of(j, result.run.results, has_blob) for label, j in per_target.items()} if per_target else None
        entries.append(_entry(key, info, stages, families[key.shader], targets))
        vulkan = stages if targets is None or any(t.startswith("vulkan") for t in targets) else None
        if vulkan is not None:  # the runtime contract reflects the key's stages when they are Vulkan SPIR-V
            contract.add_key(key, vulkan, info.bindings)
        if fallbacks.get(f"{key.shader}/{key.pass_name}") == key.text and vulkan is not None:
            fallback_stages[key] = vulkan
        if len(stages) < len(jobs) or (targets and any(len(targets[t]) < len(per_target[t]) for t in targets)):
            missing = {"key": key.text, "message": "a stage blob is missing from the cache"}
            errors += _key_errors(key, result) or [missing]
    by_pass = bindings_by_pass(required)
    for key, stages in fallback_stages.items():
        contract.add_fallback(key, stages, by_pass)
    result.warnings += [w for w in dict.fromkeys(contract.warnings) if w not in result.warnings]
    return mf.chunk_manifest(chunk, level, entries, errors, draws=contract.draw_list(), pipelines=contract.pipelines,
                             reflection=contract.blobs, fallbacks=fallbacks)


def _entry(key: PermutationKey, info: KeyUses, stages: dict[str, str], ruleset,
           targets: dict[str, dict[str, str]] | None = None) -> mf.ManifestEntry:
    spec = {name: mf.SpecConstant(ruleset.features[name].constant_id, tuple(values))
            for name, values in info.specialization.items()}
    return mf.ManifestEntry(key=key.text, hash=key.hash, shader=key.shader, pass_name=key.pass_name,
                            features=dict(key.features), stages=stages, draws=info.draws,
                            render_states=tuple(info.render_states), specialization=spec, targets=targets)


def _level_chunks(out: Path, level: str) -> list[mf.ChunkManifest]:
    """Every chunk manifest of ``level`` on disk (this cook's and earlier ones)."""
    manifests = []
    for path in level_files(out, level):
        try:
            manifest = mf.load_chunk_manifest(path)
        except mf.ManifestError:
            continue
        if manifest.level == level:
            manifests.append(manifest)
    return manifests
