"""The library surface: what the CLI calls and what studio pipelines import.

Every function takes a world (a folder, or an opened :class:`World`) and returns a
typed result with a ``to_json()``; none of them prints.  User errors that stop the
whole run (an invalid rule set, an unreadable pipeline.toml, an unknown ``chunk``)
raise :class:`pipeline.errors.PipelineError`; errors that only affect one file or one
job are collected in the result (``errors``, ``warnings``, ``diagnostics``) as
:class:`Diagnostic` objects (``file``, ``line``, ``col``, ``pointer``, ``severity``,
``message``; a cook's carry the ``key`` whose job reported them) and the rest is
still done.  A bad argument value is located at the argument, by its name here:
``chunk: error: no chunk 'x' in the world; did you mean 'forest/c01'?``
(:meth:`Location.argument`).

``__all__`` is the public surface; the package ships ``py.typed``.  The constant
``EXPLAIN_KEYS`` is the default of :func:`report`'s ``explain_keys``.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from pipeline.builtin import builtin_rules_dir as _builtin_rules_dir
from pipeline.cache import gc as _gc
from pipeline.cache.store import Store
from pipeline.cache.store import default_cache_dir as _default_cache_dir
from pipeline.cook import run as _cook
from pipeline.outputs.atomic import check_folder as _check_folder
from pipeline.outputs.atomic import cleanup_stale_temps as _cleanup_stale_temps
from pipeline.compile.farm_address import check_audit as _check_audit, chosen_scheduler as _chosen_scheduler
from pipeline.compile.farm_session import farm_cook as _farm_cook
from pipeline.compile.shared import world_tier as _world_tier
from pipeline.outputs.sweep import sweep_outputs as _sweep_outputs
from pipeline.outputs.view import view as _view
from pipeline.outputs.write_library import settle_folder as _settle_folder
from pipeline.cpus import usable_cpus as _usable_cpus
from pipeline.heap import cook_heap as _cook_heap
from pipeline.errors import CompileError, ConfigError, CookDiagnostic, Diagnostic, GltfError, Location, PipelineError
from pipeline.errors import RuleError, canonical_folder as _canonical_folder
from pipeline.keys import fold as _fold
from pipeline.keys import incremental as _chunkcache
from pipeline.keys.required import KeysResult, keys_of
from pipeline.keys.required import optional_facts as _optional_facts
from pipeline.plan import matrix as _matrix
from pipeline.progress import NullProgress, Progress
from pipeline.progress import scan_progress as _scan_progress
from pipeline.scan.scanner import ScanResult
from pipeline.scan.scanner import scan as _scan
from pipeline.structs import replace as _replace
from pipeline.world import World, open_world

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pipeline.cook.dryrun import DryRunResult
    from pipeline.cook.timings import TimingSummary
    from pipeline.report.explain import Explanation
    from pipeline.report.funnel import Report
    from pipeline.rules.lint import LintReport
    from pipeline.runtime.checklog import CheckLogResult

__all__ = [
    # what a caller runs
    "open_world", "open_store", "check_rules", "scan", "keys", "keys_of", "transformed_texts", "cook", "clean", "show", "EXPLAIN_KEYS",
    "cooked_targets", "cache_stats", "cache_gc", "report", "timings", "explain", "runtime_check", "runtime_render",
    "check_log", "verify_ship",
    # what they take and return
    "World", "Store", "Progress", "NullProgress", "LintReport", "ScanResult", "KeysResult", "CookResult",
    "DryRunResult", "CleanResult", "CacheReport", "Report", "Explanation", "TimingSummary", "CheckLogResult",
    # what goes wrong: located diagnostics, and the errors that stop a whole call
    "Diagnostic", "CookDiagnostic", "Location", "PipelineError", "ConfigError", "RuleError", "GltfError", "CompileError",
]

CookResult, CacheReport = _cook.CookResult, _gc.CacheReport


def _world(world: World | Path | str, cache: Path | str | None = None) -> World:
    """An opened world; ``cache`` (when given) overrides its cache folder."""
    w = world if isinstance(world, World) else open_world(world)
    return _replace(w, cache_dir=Path(cache)) if cache is not None and Path(cache) != w.cache_dir else w


def _read_store(w: World) -> Store:
    """The world's cache, read without changing anything on disk (what would be written stays in memory)."""
    try:
        return Store(w.cache_dir, read_only=True)
    except sqlite3.Error as exc:
        raise PipelineError.at(str(w.cache_dir), f"cannot open the cache: {exc}") from None


def open_store(cache: Path | str | None = None) -> Store:
    """The cache at ``cache``, else ``$PIPELINE_CACHE``, else ``./cache``."""
    return Store(Path(cache) if cache is not None else _default_cache_dir())


# ------------------------------------------------------------------ rules
def check_rules(rules: Path | str | None = None, *, materials: Path | str | None = None) -> LintReport:
    """Load and lint every rule set of ``rules`` (default: the built-in ones); with ``materials``,
    also check that each stage source exists there.  Problems are in the report, not raised."""
    from pipeline.rules.lint import lint_rules  # imported on use: it pulls in numpy

    folder = Path(rules) if rules is not None else _builtin_rules_dir()
    return lint_rules(folder, materials_dir=Path(materials) if materials is not None else None)


# ------------------------------------------------------------------ scan
def scan(path: Path | str, *, cache: Path | str | None = None, level: str | None = None,
         chunk: str | None = None, optional: frozenset[str] = frozenset(),
         progress: Progress | None = None, use_cache: bool = True) -> ScanResult:
    """Draws and facts of a world, a chunk folder or a single glTF file.

    ``use_cache=False`` reads every file and neither reads nor writes the scan cache.
    """
    w = _world(path, cache)
    options = dict(optional_facts=frozenset(optional), level=level, chunk=chunk, progress=_scan_progress(progress))
    if not use_cache:
        return _scan(w, **options)
    with w.open_store() as store:
        return _scan(w, store=store, **options)


# ------------------------------------------------------------------ keys
def keys(world: World | Path | str, *, level: str | None = None, chunk: str | None = None,
         cache: Path | str | None = None, progress: Progress | None = None,
         store: Store | None = None, verify: bool = False, defines: bool = False) -> KeysResult:
    """Scan (cached) and evaluate the rule sets: the required keys, per chunk and in all.

    ``verify`` re-reads every input instead of trusting recorded file stats; ``defines``
    adds each key's exact define list, whole and per stage (``KeysResult.defines``)."""
    w = _world(world, cache)
    rulesets = w.rulesets  # a broken rule set stops here, before any scanning
    own = store is None
    store = store or w.open_store()
    try:
        scanned = _scan(w, store=store, optional_facts=_optional_facts(rulesets),
                        level=level, chunk=chunk, progress=_scan_progress(progress), verify=verify)
    finally:
        if own:
            store.close()
    result = keys_of(scanned, rulesets)
    if defines:
        from pipeline.plan.setup import key_defines
        result.defines = key_defines(w, [key for key, _ in result.required.sorted()])
    return result


def transformed_texts(world: World, found: KeysResult) -> dict[str, dict[str, str]]:
    """Key text -> stage -> its text after the family's source transform plug-ins (``keys --transformed``)."""
    from pipeline.plan.setup import key_texts
    return key_texts(world, [key for key, _ in found.required.sorted()])


# ------------------------------------------------------------------ cook
def cook(world: World | Path | str, *, level: str | None = None, chunk: str | None = None,
         cache: Path | str | None = None, out: Path | str | None = None, jobs: int | None = None,
         backend: str = "capi", fail_fast: bool = False, progress: Progress | None = None,
         compiler=None, incremental: bool = True, scheduler: str | None = None,
         remote_cache: str | None = None, remote_cache_mode: str | None = None,
         remote_options: dict | None = None, verify: bool = False, dry_run: bool = False,
         audit: float = 0, include_logs: tuple = (), platform: str | tuple[str, ...] = (),
         stamps: Mapping[str, list] | None = None) -> CookResult | DryRunResult:
    """Compile every required key that the cache does not hold and write the chunk outputs.

    ``dry_run`` compiles and writes nothing and leaves the cache as it is (a read-only look): the
    :class:`DryRunResult` says which jobs would compile and why, which outputs would be written or removed.
    ``incremental`` (the default) takes each unchanged chunk's keys from its record in the cache
    (:mod:`pipeline.keys.incremental`); the result is the same as with ``incremental=False``.
    ``verify`` trusts no recorded file stat: every input is read and hashed again, every output
    compared with what it should hold and the shader library's own checksum checked.
    ``scheduler`` compiles on a Dask cluster (``tcp://HOST:8786``, ``local:N``; ``none``: this machine),
    else ``$PIPELINE_SCHEDULER``, else pipeline.toml's ``[farm] scheduler``.  ``remote_cache`` (a folder or
    fsspec URL; else pipeline.toml's ``[cache] remote``) is a shared tier behind the local cache, written
    back in mode ``readwrite``; ``remote_options`` go to fsspec.  ``audit`` (percent) recompiles that share
    of the farm's results here and compares the bytes (:mod:`pipeline.compile.farm_trust`).
    ``include_logs``: miss logs and key lists whose valid keys the cook adds, with those of pipeline.toml's
    ``include_logs`` folder (:mod:`pipeline.keys.fold`; ``result.folded``).  ``platform``: the platforms of
    pipeline.toml's target matrix to cook (a name or several; default all, :mod:`pipeline.plan.matrix`).
    ``stamps``: a stat walk's entries ``[path, *stamp]`` by path (a missed no-op check's), not taken again.
    """
    started = time.perf_counter()
    w = _matrix.with_platforms(_world(world, cache), platform)
    chosen_scheduler, audit = _chosen_scheduler(scheduler, w.config.farm.scheduler), _check_audit(audit)
    progress = progress or NullProgress()
    out_dir = Path(out) if out is not None else Path("build")
    _check_folder(out_dir, "output folder")
    farm = _farm_cook(chosen_scheduler if not dry_run else None)  # one cluster for the chunk work and compiles
    with _cook_heap(), _read_store(w) if dry_run else w.open_store() as store, farm:
        found = None  # one cook input (CookInput): from chunk records, else from a full evaluation
        if incremental and not verify:
            found = _chunkcache.cook_input(w, store, level=level, chunk=chunk, progress=_scan_progress(progress),
                                           jobs=jobs, stamps=stamps, remote=farm.chunks)
        if found is None:
            found = _chunkcache.from_keys(keys(w, level=level, chunk=chunk, progress=progress, store=store,
                                               verify=verify), w)
        folded = _fold.fold_world(w, found, include_logs)  # cook input -> plan, beside the fallback keys
        options = _cook.CookOptions(out=out_dir, jobs=jobs or _usable_cpus(), backend=backend,
                                    fail_fast=fail_fast, optimize=w.config.cook.spirv_opt, scheduler=chosen_scheduler,
                                    audit=audit, farm_timeout=w.config.farm.batch_timeout,
                                    sweep=_sweep_scope(w, level, chunk), verify=verify, farm=farm.connection)
        if dry_run:
            from pipeline.compilers import get_backend
            from pipeline.cook.dryrun import dry_run as _dry_run

            identity = compiler.identity if compiler is not None else get_backend(backend).identity
            return _dry_run(w, found, store, options, identity, _library(w, compiler))
        remote = _world_tier(w, remote_cache, remote_cache_mode, remote_options, _library(w, compiler))
        result = farm.report(_cook.cook_keys(w, found, store, options, progress=progress, compiler=compiler,
                                             remote=remote))
    result.duration, result.folded = round(time.perf_counter() - started, 3), folded
    if result.published_at is not None:  # the chunk indexes in place, before the level manifests
        result.outputs_seconds = round(result.published_at - started, 3)
    return result


def cooked_targets(world: World | Path | str, *, platform: str | tuple[str, ...] = ()) -> dict:
    """What a cook of ``platform`` (default: all) compiles, per platform and family (:mod:`pipeline.plan.matrix`)."""
    return _matrix.cooked_targets(_matrix.with_platforms(_world(world), platform))


def _library(w: World, compiler) -> str:
    """The canonical folder diagnostics name shader library files under: the given compiler's, else the world's."""
    return compiler.library if compiler is not None else _canonical_folder(w.materials_dir)


# ------------------------------------------------------------------ cache
def _open_remote(world: World | Path | str | None, url: str | None, mode: str | None, options: dict | None):
    """The shared tier named by ``url``, else by the world's (default: this folder's) pipeline.toml."""
    w = _world(world if world is not None else Path.cwd())
    tier = _world_tier(w, url, mode, options, _library(w, None))
    return tier.cache if tier is not None else None


def cache_stats(*, cache: Path | str | None = None, world: World | Path | str | None = None,
                remote_cache: str | None = None, remote_options: dict | None = None) -> _gc.CacheReport:
    """What the local cache and the shared tier (argument, else the world's pipeline.toml) hold."""
    remote = _open_remote(world, remote_cache, "read", remote_options)
    with open_store(cache) as store:
        return _gc.CacheReport(_gc.stats(store), remote.stats() if remote is not None else None)


def cache_gc(*, keep_days: float = 30, cache: Path | str | None = None, world: World | Path | str | None = None,
             remote_cache: str | None = None, remote_cache_mode: str | None = None,
             remote_options: dict | None = None) -> _gc.CacheReport:
    """Remove what no cook of the last ``keep_days`` used, locally and (mode readwrite) in the shared tier."""
    remote = _open_remote(world, remote_cache, remote_cache_mode, remote_options)
    with open_store(cache) as store:
        local = _gc.gc(store, keep_days)
    return _gc.CacheReport(local, remote.gc(keep_days) if remote is not None else None, keep_days)


def _sweep_scope(w: World, level: str | None, chunk: str | None) -> str | None:
    """What a cook covers whole, so outputs of chunks gone from it can be removed: the world
    (""), one level, or nothing (one chunk, or a scope inside the world)."""
    return None if chunk is not None or w.scope else level or ""


def clean(world: World | Path | str, *, out: Path | str | None = None,
          cache: Path | str | None = None) -> CleanResult:
    """Remove from ``out`` what no cook of ``world`` would write: outputs of chunks and levels that
    no longer exist, per-chunk paks of earlier formats, temp files of killed writers; then the shader
    library settled to the blobs the chunk indexes left name."""
    w = _world(world, cache)
    out_dir = Path(out) if out is not None else Path("build")
    if w.scope:
        raise PipelineError.at(str(world), "clean takes a whole world (its root folder), not a part of one")
    with w.open_store() as store:
        found = _chunkcache.cook_input(w, store) or _chunkcache.from_keys(keys(w, store=store), w)
        removed = _sweep_outputs(out_dir, found.chunk_levels) + _cleanup_stale_temps(out_dir)
        _settle_folder(out_dir, store)
    return CleanResult(sorted(str(p) for p in removed))


def show(path: Path | str) -> dict:
    """An output file (chunk index, level manifest, shader library) as one plain document (``pipeline show``)."""
    return _view(path)


class CleanResult(msgspec.Struct, frozen=True):
    """What :func:`clean` removed (paths of output files, sorted); ``to_json()`` is ``pipeline clean --json``."""

    removed: list[str]

    def to_json(self) -> dict:
        return {"removed": self.removed}


# ------------------------------------------------------------------ report / explain
EXPLAIN_KEYS = 300  # keys whose explanation a report carries (the HTML page links each key to it)

_LAZY = {  # result types whose modules pull in numpy: imported on first use
    "Report": "pipeline.report.funnel", "Explanation": "pipeline.report.explain",
    "LintReport": "pipeline.rules.lint", "TimingSummary": "pipeline.cook.timings",
    "CheckLogResult": "pipeline.runtime.checklog", "DryRunResult": "pipeline.cook.dryrun",
}


def __getattr__(name: str):
    """``api.Report``, ``api.Explanation`` ... (:data:`_LAZY`), imported on first use."""
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def report(world: World | Path | str, *, level: str | None = None, chunk: str | None = None,
           cache: Path | str | None = None, what_if: dict[str, str] | None = None, budget: int | None = None,
           since: Path | str | None = None, backend: str = "capi", history: Path | str | None = None,
           explain_keys: int = EXPLAIN_KEYS, out: Path | str | None = None,
           platform: str | tuple[str, ...] = ()) -> Report:
    """The funnel report of a world (or level, or chunk); compile figures come from the cache, and a whole
    world's total binary size from the shader library of its cooked outputs ``out`` (when given and current).

    The first ``explain_keys`` keys (by text) carry their explanation (``explanations``,
    by key hash), so the HTML page can show why each key exists.  ``platform``: as the cook of those
    platforms plans (``targets``: the funnel and sizes per compile target)."""
    from pipeline.report import funnel as _report  # imported here: it pulls in numpy, which cook does not need

    w = _matrix.with_platforms(_world(world, cache), platform)
    options = _report.ReportOptions(what_if=dict(what_if or {}), budget=budget, out=Path(out) if out else None,
                                    since=Path(since) if since is not None else None, backend=backend,
                                    history=Path(history) if history is not None else None)
    with _read_store(w) as store:  # a read-only look: a cook's no-op stamp stays valid
        found = keys(w, level=level, chunk=chunk, store=store)
        scope = {"level": level, "chunk": chunk.replace("\\", "/").strip("/") if chunk else None}
        planned = _report.job_plan(w, found.required.keys, options, store)  # planned once, for both
        result = _report.build_report(w, found, store, options, scope, planned)
        if explain_keys:
            from pipeline.report import explain as _explain

            for key in sorted(found.required.keys, key=lambda k: k.text)[:explain_keys]:
                doc = _explain.explain_key(w, found, key.text, store, options, planned).to_json()
                result.explanations[key.hash] = doc
        if result.history:  # the last point is this report: give it the explanations-free figures too
            result.history[-1]["label"] = result.provenance.get("timestamp") or "this report"
        return result


def timings(world: World | Path | str, *, cache: Path | str | None = None, top: int = 10, cooks: int = 1):
    """The slowest jobs and families of the last ``cooks`` cooks, from the timing log in the cache."""
    from pipeline.cook.timings import read_log, summarize

    w = _world(world, cache)
    return summarize(read_log(w.cache_dir), top=top, cooks=cooks)


def explain(world: World | Path | str, key: str, *, level: str | None = None, chunk: str | None = None,
            cache: Path | str | None = None, backend: str = "capi") -> Explanation:
    """Why ``key`` (canonical text or hash prefix) exists: its draws, rules and stage blobs."""
    from pipeline.report import explain as _explain  # see report()
    from pipeline.report import funnel as _report

    w = _world(world, cache)
    with w.open_store() as store:
        found = keys(w, level=level, chunk=chunk, store=store)
        return _explain.explain_key(w, found, key, store, _report.ReportOptions(backend=backend))


# ------------------------------------------------------------------ runtime (a Vulkan driver)
def runtime_check(out: Path | str = "build", *, chunk: str | None = None, progress: Progress | None = None):
    """Create every shader module and pipeline state of cooked outputs with validation on (:mod:`pipeline.runtime.check`),
    and each other target by its client (:mod:`pipeline.runtime.target_check`); needs ``pip install '.[runtime]'``."""
    from pipeline.runtime.check import check  # imported on use: loads the Vulkan bindings

    return check(Path(out), chunk, progress)


def runtime_render(world: World | Path | str, file: str, *, out: Path | str = "build",
                   size: tuple[int, int] = (256, 256), miss_log: Path | str | None = None, axes: dict | None = None):
    """Render one glTF file (path relative to the world root) with its cooked pipelines
    (:mod:`pipeline.runtime.render`) at the runtime ``axes`` values given; returns a ``RenderResult``."""
    from pipeline.runtime.render import relative_file, render

    w = _world(world)
    return render(w.root, relative_file(w.root, file), Path(out), size, Path(miss_log) if miss_log else None,
                  w.config.limits, axes)


def check_log(world: World | Path | str, log: Path | str, *, out: Path | str = "build",
              cache: Path | str | None = None):
    """Whether each miss of a runtime miss log is covered by the current cook (:mod:`pipeline.runtime.checklog`)."""
    from pipeline.runtime.checklog import check_log as _check_log

    from pipeline.keys.required import RequiredKeys

    w = _world(world, cache)
    with w.open_store() as store:
        return _check_log(w, log, out, lambda c: keys(w, chunk=c, store=store).by_chunk.get(c, RequiredKeys()))


def verify_ship(world: World | Path | str, *, out: Path | str = "build", cache: Path | str | None = None):
    """Whether every draw has, for every allowed runtime axis combination, its key, pipeline state and valid
    blobs in the outputs it would load (:mod:`pipeline.runtime.ship`); no Vulkan needed."""
    from pipeline.runtime.ship import verify_ship as _verify

    w = _world(world, cache)
    with _read_store(w) as store:
        return _verify(Path(out), keys(w, store=store).by_chunk)
