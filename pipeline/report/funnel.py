"""The funnel report: what the content costs, per family, pass, level and chunk.

For every shader family and pass the funnel is

    possible         the product of the static feature domains the pass reads
    valid            canonical keys normalize can produce (:mod:`pipeline.rules.counts`)
    required         keys the scanned draws need (:mod:`pipeline.keys.evaluate`)
    unique_sources   unique stage jobs after per-stage define projection (:mod:`pipeline.cook.jobs`)
    unique_binaries  distinct SPIR-V blobs of those jobs in the cache (only once cooked)
    pso              distinct (vertex blob, fragment blob, render state) pipeline states

plus ``cached`` / ``missing`` / ``failed`` job counts from the store.  Everything
up to ``unique_sources`` comes from scan + rules alone; the rest reads the cache
(``None`` when nothing is cooked).

Beside the funnel: per level and per chunk the required keys, the keys no other
chunk (level) needs and the draws; for every static feature how many required
keys would remain were it ``dynamic``; the files and materials that need keys
nothing else needs; what-if overrides (``FEATURE=dynamic|removed``) side by side
with today; budgets (``--budget`` and ``[levels.NAME] budget`` in pipeline.toml)
naming what pushed a scope over; and a diff against an earlier JSON report.

:func:`build_report` returns a :class:`Report`; ``Report.to_json()`` is the
``pipeline report --format json`` document, which every renderer reads.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pipeline.cache.store import Store
from pipeline.config import CONFIG_NAME
from pipeline.cook.compile import BackendError, SourceTree, ToolchainError, get_backend
from pipeline.cook.jobs import JobOptions, JobPlan, plan_jobs
from pipeline.cook.run import display_prefix
from pipeline.digest import canonical_bytes
from pipeline.errors import Diagnostic, Location, PipelineError, RuleError
from pipeline.keys.evaluate import (
    KeyInfo,
    PermutationKey,
    RequiredKeys,
    derive_features,
)
from pipeline.rules.compiled import CompiledRule, default_value
from pipeline.rules.counts import Override, count_space
from pipeline.rules.expr import EvalError
from pipeline.rules.models import RuleSet, run_normalize
from pipeline.scan.facts import DrawSource
from pipeline.scan.scanner import ScanResult

if TYPE_CHECKING:
    from pipeline.api import KeysResult, World

TOP_CULPRITS = 5


class ReportError(PipelineError):
    """A report option or input is invalid (a what-if, an --since file)."""


# ------------------------------------------------------------------ rows
@dataclass(frozen=True)
class FunnelRow:
    """One family and pass (or ``pass_name='*'``: the family over every pass)."""

    shader: str
    pass_name: str
    stages: int
    possible: int
    valid: int
    required: int
    unique_sources: int
    unique_binaries: int | None
    cached: int | None
    missing: int | None
    failed: int | None
    pso: int | None

    def to_json(self) -> dict:
        return _doc(self)


@dataclass(frozen=True)
class AreaRow:
    """A level or a chunk: required keys, keys no other area needs, draws."""

    name: str
    level: str
    required: int
    unique: int
    draws: int
    files: int
    budget: int | None = None

    def to_json(self) -> dict:
        return _doc(self)


@dataclass(frozen=True)
class FeatureRow:
    """How much one static feature multiplies a family's required keys."""

    shader: str
    feature: str
    values_used: int
    required: int
    if_dynamic: int

    @property
    def saved(self) -> int:
        return self.required - self.if_dynamic

    def to_json(self) -> dict:
        return {**_doc(self), "saved": self.saved}


@dataclass(frozen=True)
class ContributorRow:
    """A file (or a material of a file) and the keys only it needs."""

    file: str
    material: str | None
    keys: int
    only_here: int
    draws: int

    def to_json(self) -> dict:
        return _doc(self)


@dataclass(frozen=True)
class KeyRow:
    """One required key and where it is needed (what ``--since`` diffs)."""

    key: str
    hash: str
    shader: str
    pass_name: str
    draws: int
    chunks: tuple[str, ...]
    files: tuple[str, ...]

    def to_json(self) -> dict:
        return _doc(self)


@dataclass(frozen=True)
class BudgetCheck:
    """Required keys of a scope against its budget, and what pushed it over."""

    scope: str  # 'world' | 'level' | 'chunk'
    name: str
    budget: int
    required: int
    origin: str  # where the budget was set: '--budget' or 'pipeline.toml'
    culprits: tuple[tuple[str, int], ...] = ()  # (file, keys only it needs in this scope)
    features: tuple[tuple[str, int], ...] = ()  # (shader.FEATURE, keys saved if dynamic)

    @property
    def over(self) -> bool:
        return self.required > self.budget

    def message(self) -> str:
        head = f"{self.scope} {self.name}: {self.required} required keys exceed the budget of {self.budget} " \
               f"(+{self.required - self.budget})"
        files = ", ".join(f"{f} ({n})" for f, n in self.culprits)
        feats = ", ".join(f"{f} (-{n})" for f, n in self.features)
        parts = [head]
        if files:
            parts.append(f"keys only these files need: {files}")
        if feats:
            parts.append(f"making these features dynamic would save: {feats}")
        return "; ".join(parts)

    def to_json(self) -> dict:
        return {"scope": self.scope, "name": self.name, "budget": self.budget, "required": self.required,
                "origin": self.origin, "over": self.over,
                "culprits": [{"file": f, "only_here": n} for f, n in self.culprits],
                "features": [{"feature": f, "saved": n} for f, n in self.features],
                "message": self.message() if self.over else None}


@dataclass(frozen=True)
class SinceDiff:
    """Keys added and removed against an earlier JSON report, with the files that brought them."""

    old: str
    added: tuple[tuple[str, tuple[str, ...]], ...]
    removed: tuple[tuple[str, tuple[str, ...]], ...]

    def by_file(self) -> list[dict]:
        counts: dict[str, Counter] = defaultdict(Counter)
        for kind, items in (("added", self.added), ("removed", self.removed)):
            for _, files in items:
                for f in files:
                    counts[f][kind] += 1
        rows = [{"file": f, "added": c["added"], "removed": c["removed"]} for f, c in counts.items()]
        return sorted(rows, key=lambda r: (-r["added"], -r["removed"], r["file"]))

    def to_json(self) -> dict:
        return {"old": self.old,
                "added": [{"key": k, "files": list(f)} for k, f in self.added],
                "removed": [{"key": k, "files": list(f)} for k, f in self.removed],
                "files": self.by_file()}


def _doc(row: Any) -> dict:
    out = {}
    for name in row.__dataclass_fields__:
        value = getattr(row, name)
        out["pass" if name == "pass_name" else name] = list(value) if isinstance(value, tuple) else value
    return out


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
    what_if: WhatIf | None = None
    budgets: list[BudgetCheck] = field(default_factory=list)
    since: SinceDiff | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def over_budget(self) -> list[BudgetCheck]:
        return [b for b in self.budgets if b.over]

    @property
    def cooked(self) -> bool:
        return any(r.unique_binaries is not None for r in self.families)

    def to_json(self) -> dict:
        return {
            "world": self.world, "scope": self.scope, "compiler": self.compiler, "cooked": self.cooked,
            "families": [r.to_json() for r in self.families], "totals": [r.to_json() for r in self.totals],
            "levels": [r.to_json() for r in self.levels], "chunks": [r.to_json() for r in self.chunks],
            "features": [r.to_json() for r in self.features],
            "contributors": {"files": [r.to_json() for r in self.files],
                             "materials": [r.to_json() for r in self.materials]},
            "keys": [r.to_json() for r in self.keys],
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


def build_report(world: "World", found: "KeysResult", store: Store | None, options: ReportOptions,
                 scope: dict[str, str | None] | None = None) -> Report:
    """The report of the keys ``found`` in ``world``; ``store`` adds the compile figures."""
    families = world.families
    required = found.required
    jobs, compiler = job_plan(world, required.keys, options)
    states = job_states(store, jobs) if store is not None and compiler else {}
    levels, chunks = area_rows(found, world)
    report = Report(
        world=str(world.root), scope=scope or {"level": None, "chunk": None}, compiler=compiler,
        families=funnel_rows(families, required, jobs, states), totals=[], levels=levels, chunks=chunks,
        features=feature_rows(families, required), files=contributor_rows(required, by_material=False),
        materials=contributor_rows(required, by_material=True), keys=key_rows(required),
        diagnostics=found.diagnostics)
    report.totals = total_rows(families, required, jobs, states, report.families)
    if options.what_if:
        report.what_if = what_if(families, found.scan, options.what_if, report.families)
    report.budgets = budget_checks(world, report, found, options.budget)
    if options.since is not None:
        report.since = since_diff(options.since, report.keys)
    return report


# ------------------------------------------------------------------ jobs and the cache
def job_options(world: "World", options: ReportOptions) -> tuple[JobOptions, str | None]:
    """The cook's job options; the compiler identity is None when no backend can run here."""
    try:
        identity = get_backend(options.backend).identity
    except (BackendError, ToolchainError):
        identity = None
    return JobOptions(options.target, world.config.cook.spirv_opt, identity or ""), identity


def job_plan(world: "World", keys, options: ReportOptions) -> tuple[JobPlan, str | None]:
    """The stage jobs of ``keys``, projected and deduplicated exactly as ``pipeline cook`` does."""
    job_opts, identity = job_options(world, options)
    tree = SourceTree(world.materials_dir, display_prefix(world.materials_dir))
    return plan_jobs(keys, world.families, tree, job_opts), identity


@dataclass(frozen=True)
class JobState:
    """A job as the cache holds it: 'cached' (with its blob), 'failed' or 'missing'."""

    state: str
    blob: str | None = None


def job_state(store: Store, job_key: str) -> JobState:
    record = store.get("job", job_key)
    if not isinstance(record, dict):
        return JobState("missing")
    blob = record.get("blob")
    if blob is not None:
        return JobState("cached", blob) if store.has_blob(blob) else JobState("missing")
    return JobState("failed") if record.get("diagnostics") else JobState("missing")


def job_states(store: Store, plan: JobPlan) -> dict[str, JobState]:
    return {key: job_state(store, key) for key in sorted(plan.jobs)}


# ------------------------------------------------------------------ the funnel
def funnel_rows(families, required: RequiredKeys, plan: JobPlan, states: dict[str, JobState]) -> list[FunnelRow]:
    rows = []
    for shader, rs in sorted(families.items()):
        for pass_name in rs.compiled.passes:
            keys = {k: i for k, i in required.keys.items() if k.shader == shader and k.pass_name == pass_name}
            space = count_space(rs, pass_name)
            rows.append(_funnel(shader, pass_name, len(rs.sources), space.possible, space.valid, keys, plan, states))
    return rows


def total_rows(families, required: RequiredKeys, plan: JobPlan, states: dict[str, JobState],
               rows: list[FunnelRow]) -> list[FunnelRow]:
    out = []
    for shader, rs in sorted(families.items()):
        mine = [r for r in rows if r.shader == shader]
        keys = {k: i for k, i in required.keys.items() if k.shader == shader}
        out.append(_funnel(shader, "*", len(rs.sources), sum(r.possible for r in mine),
                           sum(r.valid for r in mine), keys, plan, states))
    return out


def _funnel(shader: str, pass_name: str, stages: int, possible: int, valid: int,
            keys: dict[PermutationKey, KeyInfo], plan: JobPlan, states: dict[str, JobState]) -> FunnelRow:
    jobs = {j for k in keys for j in plan.jobs_for(k).values()}
    found = [states[j] for j in jobs if j in states]
    counts = Counter(s.state for s in found)
    cooked = bool(states) and counts["cached"] > 0
    complete = cooked and counts["cached"] == len(jobs)
    return FunnelRow(
        shader, pass_name, stages, possible, valid, len(keys), len(jobs),
        unique_binaries=len({s.blob for s in found if s.blob}) if cooked else None,
        cached=counts["cached"] if states else None,
        missing=(len(jobs) - counts["cached"] - counts["failed"]) if states else None,
        failed=counts["failed"] if states else None,
        pso=_pso(keys, plan, states) if complete else None)


def _pso(keys: dict[PermutationKey, KeyInfo], plan: JobPlan, states: dict[str, JobState]) -> int:
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


# ------------------------------------------------------------------ features and contributors
def feature_rows(families, required: RequiredKeys) -> list[FeatureRow]:
    """For each static feature: the family's required keys, and how many would remain were it dynamic."""
    rows = []
    for shader, rs in sorted(families.items()):
        keys = [k for k in required.keys if k.shader == shader]
        static = sorted(f for f, mode in rs.compiled.modes.items() if mode == "static")
        for feature in static:
            used = {dict(k.features)[feature] for k in keys if feature in dict(k.features)}
            remaining = {drop_feature(k, feature) for k in keys}
            rows.append(FeatureRow(shader, feature, len(used), len(keys), len(remaining)))
    return sorted(rows, key=lambda r: (-r.saved, r.shader, r.feature))


def drop_feature(key: PermutationKey, feature: str) -> PermutationKey:
    """``key`` without ``feature`` (what the key would be were the feature dynamic)."""
    return PermutationKey(key.shader, key.pass_name, tuple(kv for kv in key.features if kv[0] != feature))


def contributor_rows(required: RequiredKeys, *, by_material: bool) -> list[ContributorRow]:
    """Files (or materials) by how many keys they alone need, then by keys needed."""
    owners: dict[PermutationKey, set[tuple]] = {}
    draws: Counter = Counter()
    for key, info in required.keys.items():
        owners[key] = {_owner(s, by_material) for s in info.draws}
        draws.update(_owner(s, by_material) for s in info.draws)
    keys = Counter(o for found in owners.values() for o in found)
    alone = Counter(next(iter(found)) for found in owners.values() if len(found) == 1)
    rows = [ContributorRow(o[0], o[1], keys[o], alone[o], draws[o]) for o in keys]
    return sorted(rows, key=lambda r: (-r.only_here, -r.keys, r.file, r.material or ""))


def _owner(source: DrawSource, by_material: bool) -> tuple[str, str | None]:
    if not by_material:
        return source.file, None
    name = "default" if source.material is None else f"material {source.material}"
    return source.file, name + (f" [{source.variant}]" if source.variant else "")


def key_rows(required: RequiredKeys) -> list[KeyRow]:
    return [KeyRow(k.text, k.hash, k.shader, k.pass_name, len(i.draws),
                   tuple(sorted({s.chunk for s in i.draws})), tuple(sorted({s.file for s in i.draws})))
            for k, i in required.sorted()]


# ------------------------------------------------------------------ what-if
@dataclass(frozen=True)
class WhatIfRow:
    """One family and pass today and under the overrides."""

    shader: str
    pass_name: str
    today: tuple[int, int, int]    # possible, valid, required
    what_if: tuple[int, int, int]

    def to_json(self) -> dict:
        names = ("possible", "valid", "required")
        return {"shader": self.shader, "pass": self.pass_name, "today": dict(zip(names, self.today)),
                "what_if": dict(zip(names, self.what_if))}


@dataclass(frozen=True)
class WhatIf:
    """The funnel as if the rule sets made some features dynamic (or removed them)."""

    overrides: dict[str, Override]
    rows: tuple[WhatIfRow, ...]

    def to_json(self) -> dict:
        return {"overrides": dict(sorted(self.overrides.items())), "families": [r.to_json() for r in self.rows]}


def what_if(families, scan: ScanResult, overrides: dict[str, Override], today: list[FunnelRow]) -> WhatIf:
    """possible, valid and required of every family and pass under ``overrides``."""
    _check_what_if(families, overrides)
    facts = list({scan.signature(d): d.facts for d in scan.draws}.values())
    rows = []
    for shader, rs in sorted(families.items()):
        mine = {f: how for f, how in overrides.items() if f in rs.compiled.domains}
        keys = what_if_keys(rs, facts, mine)
        for row in (r for r in today if r.shader == shader):
            space = count_space(rs, row.pass_name, overrides=mine)
            rows.append(WhatIfRow(shader, row.pass_name, (row.possible, row.valid, row.required),
                                  (space.possible, space.valid, len(keys[row.pass_name]))))
    return WhatIf(dict(overrides), tuple(rows))


def _check_what_if(families, overrides: dict[str, Override]) -> None:
    known = {f for rs in families.values() for f in rs.compiled.domains}
    for name, how in sorted(overrides.items()):
        if name not in known:
            raise ReportError(Diagnostic(Location("--what-if"), f"{name}={how}: no rule set has a feature {name}"))
        if how not in ("dynamic", "removed"):
            raise ReportError(Diagnostic(Location("--what-if"), f"{name}={how}: expected dynamic or removed"))


def what_if_keys(rs: RuleSet, facts: list, overrides: dict[str, Override]) -> dict[str, set[tuple]]:
    """The keys (as feature tuples) each pass would need under ``overrides``.

    ``dynamic`` drops the feature from the key after normalize; ``removed`` fixes it
    at its default before normalize, and rules no longer set it (as validcount does).
    With no overrides this is exactly :func:`pipeline.keys.evaluate.required_keys`.
    """
    removed = {f for f, how in overrides.items() if how == "removed"}
    passes = {name: (_without(p.rules, removed), p) for name, p in rs.compiled.passes.items()}
    out: dict[str, set[tuple]] = {name: set() for name in passes}
    for item in facts:
        values = _derived(rs, item)
        if values is None:
            continue
        values.update({f: default_value(rs.domain(f)) for f in removed})
        for name, (rules, pass_) in passes.items():
            key = _pass_key(pass_, rules, values, overrides)
            if key is not None:
                out[name].add(key)
    return out


def _derived(rs: RuleSet, facts) -> dict | None:
    """Derived feature values of a draw the family selects; None otherwise (or on a rule error)."""
    try:
        if not rs.compiled.select.expr(facts, None):
            return None
        return derive_features(rs, facts)[0]
    except (EvalError, RuleError):
        return None


def _without(rules: tuple[CompiledRule, ...], removed: set[str]) -> tuple[CompiledRule, ...]:
    kept = []
    for rule in rules:
        targets = {f: v for f, v in rule.set.items() if f not in removed}
        if targets:
            kept.append(replace(rule, set=targets) if len(targets) < len(rule.set) else rule)
    return tuple(kept)


def _pass_key(pass_, rules, values: dict, overrides: dict) -> tuple | None:
    try:
        normalized, _ = run_normalize(rules, values)
        if pass_.skip is not None and pass_.skip.expr(None, normalized):
            return None
    except (EvalError, RuleError):
        return None
    return tuple((f, normalized[f]) for f in pass_.static if f not in overrides)


# ------------------------------------------------------------------ budgets
def budget_checks(world: "World", report: Report, found: "KeysResult", budget: int | None) -> list[BudgetCheck]:
    """--budget against the whole selection, and each level's configured budget."""
    checks = []
    if budget is not None:
        name = report.scope.get("chunk") or report.scope.get("level") or "(all)"
        kind = "chunk" if report.scope.get("chunk") else "level" if report.scope.get("level") else "world"
        checks.append(_check(kind, name, budget, "--budget", found.required, report.features))
    for level in report.levels:
        if level.budget is not None:
            checks.append(_check("level", level.name, level.budget, CONFIG_NAME, _level_keys(found, level.name),
                                 report.features))
    return checks


def _level_keys(found: "KeysResult", level: str) -> RequiredKeys:
    merged = RequiredKeys()
    for chunk, required in found.by_chunk.items():
        for key, info in required.keys.items():
            if any(s.level == level for s in info.draws):
                merged.keys.setdefault(key, KeyInfo()).draws.extend(info.draws)
    return merged


def _check(kind: str, name: str, budget: int, origin: str, required: RequiredKeys,
           features: list[FeatureRow]) -> BudgetCheck:
    count = len(required.keys)
    if count <= budget:
        return BudgetCheck(kind, name, budget, count, origin)
    excess, culprits = count - budget, []
    for row in contributor_rows(required, by_material=False):
        if row.only_here == 0 or len(culprits) >= TOP_CULPRITS or excess <= 0:
            break
        culprits.append((row.file, row.only_here))
        excess -= row.only_here
    top = tuple((f"{r.shader}.{r.feature}", r.saved) for r in features[:3] if r.saved > 0)
    return BudgetCheck(kind, name, budget, count, origin, tuple(culprits), top)


# ------------------------------------------------------------------ --since
def since_diff(old_path: Path, keys: list[KeyRow]) -> SinceDiff:
    """Keys added and removed against the ``keys`` of an earlier JSON report."""
    old = load_old_keys(old_path)
    new = {row.key: row.files for row in keys}
    added = tuple((k, tuple(new[k])) for k in sorted(set(new) - set(old)))
    removed = tuple((k, tuple(old[k])) for k in sorted(set(old) - set(new)))
    return SinceDiff(str(old_path), added, removed)


def load_old_keys(path: Path) -> dict[str, list[str]]:
    """key text -> files, from a ``pipeline report --format json`` document."""
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ReportError(Diagnostic(Location(str(path)), f"cannot read earlier report: {exc.strerror or exc}"))
    except orjson.JSONDecodeError as exc:
        raise ReportError(Diagnostic(Location(str(path)), f"not a JSON report: {exc}"))
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, dict) and isinstance(k.get("key"), str) for k in keys):
        raise ReportError(Diagnostic(Location(str(path), pointer="/keys"),
                                     "not a pipeline report: expected a 'keys' list of {\"key\", \"files\"}"))
    return {k["key"]: [str(f) for f in k.get("files") or []] for k in keys}
