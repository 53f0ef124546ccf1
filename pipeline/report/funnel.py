"""The funnel report: what the content costs, per family, pass, level and chunk.

For every shader family and pass the funnel is

    possible         the product of the static feature domains the pass reads
    valid            canonical keys normalize can produce (:mod:`pipeline.rules.counts`)
    required         keys the scanned draws need (:mod:`pipeline.keys.evaluate`)
    unique_sources   unique stage jobs after per-stage define projection (:mod:`pipeline.plan.jobs`)
    unique_binaries  distinct SPIR-V blobs of those jobs in the cache (only once cooked)
    pso              distinct (vertex blob, fragment blob, render state) pipeline states

plus ``cached`` / ``missing`` / ``failed`` job counts from the store.  Everything
up to ``unique_sources`` comes from scan + rules alone; the rest reads the cache
(``None`` when nothing is cooked).

Beside the funnel: per level and per chunk the required keys, the keys no other
chunk (level) needs and the draws; for every static feature how many required
keys would remain were it ``dynamic``; the files and materials that need keys
nothing else needs; what-if overrides (``family.FEATURE=dynamic|removed``) side by side
with today; budgets (``--budget`` and ``[levels.NAME] budget`` in pipeline.toml)
naming what pushed a scope over; and a diff against an earlier JSON report.

:func:`build_report` returns a :class:`Report`; ``Report.to_json()`` is the
``pipeline report --format json`` document, which every renderer reads.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cache.job_records import JOB
from pipeline.cache.store import Store
from pipeline.compilers import BackendError, ToolchainError, get_backend
from pipeline.plan.jobs import JobPlan
from pipeline.plan.setup import plan_for
from pipeline.digest import canonical_bytes
from pipeline.errors import Diagnostic
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeyUses, RequiredKeys
from pipeline.outputs.manifest import library_path
from pipeline.report.budget import budget_checks
from pipeline.report.errors import ReportError  # noqa: F401  (re-exported)
from pipeline.keys.fold import fold_keys
from pipeline.report.axes import axis_rows
from pipeline.report.fallbacks import fallback_rows
from pipeline.report.features import contributor_rows, feature_rows, key_rows
from pipeline.report.rows import (
    AreaRow,
    BudgetCheck,
    ContributorRow,
    FeatureRow,
    FunnelRow,
    KeyRow,
    SinceDiff,
    TargetRow,
)
from pipeline.report.targets import target_rows
from pipeline.report.costs import binary_sizes, compile_times, key_blob_sizes
from pipeline.report.history import load_history
from pipeline.report.provenance import gltf_names, provenance
from pipeline.report.since import since_diff
from pipeline.report.whatif import WhatIf, what_if
from pipeline.rules.counts import DEFAULT_MAX_CELLS, Override, add_counts, count_space
from pipeline.structs import replace

if TYPE_CHECKING:
    from pipeline.keys.required import KeysResult
    from pipeline.world import World

TOP_CULPRITS = 5
REPORT_FORMAT = 3  # the JSON report's layout version ("format"); 2 added provenance, sizes, timings, names;
                  # 3 added fallback_keys and features[].name, and what-if overrides by family.FEATURE
                  # (runtime axes added "axes" and what-if only:VALUES, keeping format 3: readers ignore new fields;
                  # so did "targets", the funnel and sizes per compile target)


# ------------------------------------------------------------------ the report
@dataclass
class Report:
    """Everything ``pipeline report`` shows; ``to_json()`` is its machine form."""

    world: str
    scope: dict[str, str | None]
    compiler: str | None
    families: list[FunnelRow]
    totals: list[FunnelRow]
    levels: list[AreaRow]
    chunks: list[AreaRow]
    features: list[FeatureRow]
    files: list[ContributorRow]
    materials: list[ContributorRow]
    keys: list[KeyRow]
    fallback_keys: list[dict] = field(default_factory=list)  # fallbacks a cook adds that no draw requires
    targets: list[TargetRow] = field(default_factory=list)  # the funnel and sizes per compile target (report/targets.py)
    axes: list[dict] = field(default_factory=list)  # runtime axis multipliers per family and pass (report/axes.py)
    folded: list[dict] = field(default_factory=list)  # keys pipeline.toml's include_logs folds into a cook
    what_if: WhatIf | None = None
    budgets: list[BudgetCheck] = field(default_factory=list)
    since: SinceDiff | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)
    sizes: dict | None = None            # binary bytes per chunk, level, total (cooked only)
    timings: dict | None = None          # compile time per job and family (from the timing log)
    history: list[dict] | None = None    # earlier reports (--history), then this one
    names: dict = field(default_factory=dict)         # file -> {"materials", "nodes": {index: name}}
    explanations: dict = field(default_factory=dict)  # key hash -> explain document (api.report adds them)

    @property
    def over_budget(self) -> list[BudgetCheck]:
        return [b for b in self.budgets if b.over]

    @property
    def cooked(self) -> bool:
        return any(r.unique_binaries is not None for r in self.families)

    def to_json(self) -> dict:
        return {
            "format": REPORT_FORMAT, "provenance": self.provenance, "sizes": self.sizes, "timings": self.timings,
            "history": self.history, "explanations": self.explanations,
            "names": {f: {part: {str(i): n for i, n in sorted(m.items())} for part, m in parts.items()}
                      for f, parts in sorted(self.names.items())},
            "world": self.world, "scope": self.scope, "compiler": self.compiler, "cooked": self.cooked,
            "families": [r.to_json() for r in self.families], "totals": [r.to_json() for r in self.totals],
            "levels": [r.to_json() for r in self.levels], "chunks": [r.to_json() for r in self.chunks],
            "features": [r.to_json() for r in self.features],
            "contributors": {"files": [r.to_json() for r in self.files],
                             "materials": [r.to_json() for r in self.materials]},
            "keys": [r.to_json() for r in self.keys], "fallback_keys": self.fallback_keys, "axes": self.axes,
            "targets": [r.to_json() for r in self.targets],
            "folded": self.folded,
            "what_if": self.what_if.to_json() if self.what_if else None,
            "budgets": [b.to_json() for b in self.budgets],
            "since": self.since.to_json() if self.since else None,
            "errors": [d.to_json() for d in self.diagnostics],
        }


@dataclass(frozen=True)
class ReportOptions:
    """What to add to the plain funnel."""

    what_if: dict[str, Override] = field(default_factory=dict)
    budget: int | None = None
    since: Path | None = None
    backend: str = "capi"
    target: str = "vulkan1.2"
    history: Path | None = None
    out: Path | None = None  # the cooked outputs: a whole world's total binary size is their library's


def build_report(world: "World", found: "KeysResult", store: Store | None, options: ReportOptions,
                 scope: dict[str, str | None] | None = None,
                 planned: tuple[JobPlan, str | None] | None = None) -> Report:
    """The report of the keys ``found`` in ``world``; ``store`` adds the compile figures.
    ``planned``: the keys' :func:`job_plan`, when the caller made it already."""
    families = world.families
    required = found.required
    jobs, compiler = planned or job_plan(world, required.keys, options, store)
    states = job_states(store, jobs) if store is not None and compiler else {}
    levels, chunks = area_rows(found, world)
    report = Report(
        world=str(world.root), scope=scope or {"level": None, "chunk": None}, compiler=compiler,
        families=funnel_rows(families, required, jobs, states, world.config.limits.max_count_cells), totals=[],
        levels=levels, chunks=chunks,
        features=feature_rows(families, required), files=contributor_rows(required, by_material=False),
        materials=contributor_rows(required, by_material=True),
        keys=key_rows(required, key_blob_sizes(jobs, states, store) if states else None),
        diagnostics=found.diagnostics)
    report.totals = total_rows(families, required, jobs, states, report.families)
    report.targets = target_rows(families, world.config, required, jobs, states, store, report.totals, options.target)
    report.fallback_keys, fallback_errors = fallback_rows(families, required)
    report.diagnostics = list(report.diagnostics) + fallback_errors
    report.axes = axis_rows(families, required)
    report.folded = [f.to_json() for f in fold_keys(world, found)[0].folded]
    if options.what_if:
        report.what_if = what_if(families, found.scan, options.what_if, report.families,
                                 world.config.limits.max_count_cells)
    report.budgets = budget_checks(world, report, found, options.budget)
    if options.since is not None:
        cell = report.scope.get("chunk")
        report.since = since_diff(options.since, report.keys, report.scope,
                                  grid_cell=bool(cell and world.config.grid(world.level_of(cell))))
    report.provenance = provenance(world.root, world.rules_dir)
    chunk_levels = {r.name: r.level for r in chunks}
    library = library_path(options.out) if options.out is not None and not any(report.scope.values()) else None
    report.sizes = binary_sizes(found, jobs, states, store, chunk_levels, library)
    first = {}
    for key in sorted(required.keys, key=lambda k: k.text):
        for job in jobs.jobs_for(key).values():
            first.setdefault(job, key.text)
    report.timings = compile_times(store.directory, jobs, first) if store is not None else None
    report.names = gltf_names(world.root, {d.source.file for d in found.scan.draws})
    _name_materials(report)
    if options.history is not None:
        report.history = load_history(options.history, report.to_json())
    return report


def _name_materials(report: Report) -> None:
    """Materials by the names their files give them ("material 2" -> "material 2 (bark)")."""
    for i, row in enumerate(report.materials):
        index = row.material.removeprefix("material ") if row.material else ""
        name = report.names.get(row.file, {}).get("materials", {}).get(int(index)) if index.isdigit() else None
        if name:
            report.materials[i] = replace(row, material=f"{row.material} ({name})")


# ------------------------------------------------------------------ jobs and the cache
def compiler_identity(options: ReportOptions) -> str | None:
    """The identity of the cook's compiler, or None when no backend can run here."""
    try:
        return get_backend(options.backend).identity
    except (BackendError, ToolchainError):
        return None


def job_plan(world: "World", keys, options: ReportOptions, store: Store | None = None) -> tuple[JobPlan, str | None]:
    """The stage jobs of ``keys`` and the compiler identity, planned exactly as ``pipeline cook`` plans
    them (:mod:`pipeline.plan.setup`); ``store``: the exact keys the cook recorded are read, not remade."""
    identity = compiler_identity(options)
    return plan_for(world, keys, identity or "", store=store, target=options.target), identity


@dataclass(frozen=True)
class JobState:
    """A job as the cache holds it: 'cached' (with its blob), 'failed' or 'missing'."""

    state: str
    blob: str | None = None


def job_state(store: Store, job_key: str) -> JobState:
    record = store.get(JOB, job_key)
    if not isinstance(record, dict):
        return JobState("missing")
    blob = record.get("blob")
    if blob is not None:
        return JobState("cached", blob) if store.has_blob(blob) else JobState("missing")
    return JobState("failed") if record.get("diagnostics") else JobState("missing")


def job_states(store: Store, plan: JobPlan) -> dict[str, JobState]:
    return {key: job_state(store, key) for key in sorted(plan.jobs)}


# ------------------------------------------------------------------ the funnel
def funnel_rows(families, required: RequiredKeys, plan: JobPlan, states: dict[str, JobState],
                max_cells: int = DEFAULT_MAX_CELLS) -> list[FunnelRow]:
    rows = []
    for shader, rs in sorted(families.items()):
        for pass_name in rs.compiled.passes:
            keys = {k: i for k, i in required.keys.items() if k.shader == shader and k.pass_name == pass_name}
            space = count_space(rs, pass_name, max_cells=max_cells)
            rows.append(_generated(rs, keys, plan, _funnel(shader, pass_name, stage_count(rs), space.possible,
                                                            space.valid, keys, plan, states)))
    return rows


def stage_count(rs) -> int:
    """Stages per key: an ubershader's source files; a generated family makes a vertex and a fragment stage."""
    return len(rs.sources) if rs.kind == "ubershader" else 2


def _generated(rs, keys: dict[PermutationKey, KeyUses], plan: JobPlan, row: FunnelRow) -> FunnelRow:
    """A generated family's row also counts materials and (materialx) graph shapes:
    materials -> graph shapes -> generated sources (``unique_sources``) -> binaries."""
    if rs.kind == "ubershader":
        return row
    materials = {(d.file, d.material) for info in keys.values() for d in info.draws}
    shapes = {plan.shapes[k] for k in keys if k in plan.shapes} if rs.kind == "materialx" else None
    return replace(row, kind=rs.kind, materials=len(materials), graph_shapes=None if shapes is None else len(shapes))


def total_rows(families, required: RequiredKeys, plan: JobPlan, states: dict[str, JobState],
               rows: list[FunnelRow]) -> list[FunnelRow]:
    out = []
    for shader, rs in sorted(families.items()):
        mine = [r for r in rows if r.shader == shader]
        keys = {k: i for k, i in required.keys.items() if k.shader == shader}
        out.append(_generated(rs, keys, plan, _funnel(shader, "*", stage_count(rs), add_counts(r.possible for r in mine),
                                                      add_counts(r.valid for r in mine), keys, plan, states)))
    return out


def _funnel(shader: str, pass_name: str, stages: int, possible: int, valid: int,
            keys: dict[PermutationKey, KeyUses], plan: JobPlan, states: dict[str, JobState]) -> FunnelRow:
    jobs = {j for k in keys for j in plan.all_jobs_for(k)}
    found = [states[j] for j in jobs if j in states]
    counts = Counter(s.state for s in found)
    # a family without keys has 0 binaries and pipeline states once anything is cooked (not unknown)
    cooked = bool(states) and (counts["cached"] > 0 or not jobs and any(s.state == "cached" for s in states.values()))
    complete = cooked and counts["cached"] == len(jobs)
    return FunnelRow(
        shader, pass_name, stages, possible, valid, len(keys), len(jobs),
        unique_binaries=len({s.blob for s in found if s.blob}) if cooked else None,
        cached=counts["cached"] if states else None,
        missing=(len(jobs) - counts["cached"] - counts["failed"]) if states else None,
        failed=counts["failed"] if states else None,
        pso=_pso(keys, plan, states) if complete else None)


def _pso(keys: dict[PermutationKey, KeyUses], plan: JobPlan, states: dict[str, JobState]) -> int:
    """Distinct (stage blobs, render state) pairs: the pipeline objects the content creates."""
    seen = set()
    for key, info in keys.items():
        blobs = tuple(sorted((stage, states[job].blob) for stage, job in plan.jobs_for(key).items()))
        for render_state in info.render_states:
            seen.add((blobs, canonical_bytes(render_state)))
    return len(seen)


# ------------------------------------------------------------------ levels and chunks
def area_rows(found: "KeysResult", world: "World") -> tuple[list[AreaRow], list[AreaRow]]:
    """(levels, chunks): required keys, keys no other level/chunk needs, draws, files."""
    chunk_level = _chunk_levels(found, world)
    draws = Counter(d.source.chunk for d in found.scan.draws)
    files = _files_per(found, lambda s: s.chunk)
    key_chunks = _key_areas(found, lambda c: c)
    chunks = [AreaRow(c, lvl, len(found.by_chunk.get(c, RequiredKeys()).keys),
                      _unique(key_chunks, c), draws[c], len(files[c])) for c, lvl in sorted(chunk_level.items())]
    key_levels = _key_areas(found, lambda c: chunk_level.get(c, c))
    level_files = _files_per(found, lambda s: s.level)
    levels = []
    for level in sorted(set(chunk_level.values())):
        mine = [r for r in chunks if r.level == level]
        required = sum(1 for areas in key_levels.values() if level in areas)
        levels.append(AreaRow(level, level, required, _unique(key_levels, level), sum(r.draws for r in mine),
                              len(level_files[level]), world.config.level(level).budget))
    return levels, chunks


def _chunk_levels(found: "KeysResult", world: "World") -> dict[str, str]:
    return {name: world.level_of(name) for name in found.scan.chunks}


def _files_per(found: "KeysResult", area) -> dict[str, set[str]]:
    files: dict[str, set[str]] = defaultdict(set)
    for d in found.scan.draws:
        files[area(d.source)].add(d.source.file)
    return files


def _key_areas(found: "KeysResult", area) -> dict[PermutationKey, set[str]]:
    out: dict[PermutationKey, set[str]] = defaultdict(set)
    for chunk, required in found.by_chunk.items():
        for key in required.keys:
            out[key].add(area(chunk))
    return out


def _unique(key_areas: dict[PermutationKey, set[str]], name: str) -> int:
    return sum(1 for areas in key_areas.values() if areas == {name})
