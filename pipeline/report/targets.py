"""The report per compile target: a family's funnel and binary sizes for each target label it is cooked for.

Every family's keys are compiled once per target (its ``compile:``, pipeline.toml
``[cook.compile]`` or the ``[platforms]`` matrix, :mod:`pipeline.plan.matrix`).  Per target
label and family the rows give possible -> valid -> required keys -> unique jobs of that
target, then what the cache holds for them: distinct binaries, their bytes (raw and zlib),
cached, missing and failed jobs.  A target a family cannot express (a located error of that
target's jobs) shows as ``failed`` in its own row while the family's other targets stay ``ok``.
A ``*`` row per label sums its families (binaries and bytes of the distinct blobs).
"""

from __future__ import annotations

import zlib
from collections import defaultdict

from pipeline.cache.store import Store
from pipeline.config import WorldConfig
from pipeline.keys.required import RequiredKeys
from pipeline.plan.jobs import JobPlan
from pipeline.plan.matrix import platform_targets
from pipeline.report.costs import ZLIB_LEVEL
from pipeline.report.rows import FunnelRow, TargetRow
from pipeline.rules.models import RuleSet


def key_targets(plan: JobPlan, key, default: str) -> dict[str, dict[str, str]]:
    """Target label -> stage -> job of one key (a family naming no target: the cook's ``default`` target)."""
    per_target = plan.targets.get(key)
    if per_target is not None:
        return per_target
    stages = plan.stages.get(key)
    return {default: stages} if stages else {}


def target_rows(families: dict[str, RuleSet], config: WorldConfig, required: RequiredKeys, plan: JobPlan,
                states: dict, store: Store | None, totals: list[FunnelRow], default: str) -> list[TargetRow]:
    """Rows per target label (sorted), each label's families (those with required keys) then its ``*`` row."""
    jobs: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # label -> family -> jobs
    keys: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for key in sorted(required.keys):
        for label, stages in key_targets(plan, key, default).items():
            keys[label][key.shader] += 1
            jobs[label][key.shader] |= set(stages.values())
    funnel = {r.shader: r for r in totals}
    platforms = _platforms(config, families)
    sizes: dict[str, tuple[int, int] | None] = {}
    rows = []
    for label in sorted(jobs):
        mine = []
        for name in sorted(jobs[label]):
            row = funnel.get(name)
            mine.append(_row(label, name, platforms.get(label, ()), row.possible if row else 0,
                             row.valid if row else 0, keys[label][name], jobs[label][name], states, store, sizes))
        every = set().union(*jobs[label].values())
        rows += mine + [_row(label, "*", platforms.get(label, ()), _total(r.possible for r in mine),
                             _total(r.valid for r in mine), sum(r.required for r in mine), every, states, store, sizes)]
    return rows


def _total(counts):
    """The sum of families' counts; a family whose count is not a number (``open``: its space has no
    bound) makes the total that too."""
    counts = list(counts)
    return next((c for c in counts if not isinstance(c, int)), None) or sum(counts)


def _platforms(config: WorldConfig, families: dict[str, RuleSet]) -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = defaultdict(set)
    for platform, by_family in platform_targets(config, families).items():
        for labels in by_family.values():
            for label in labels:
                out[label].add(platform)
    return {label: tuple(sorted(names)) for label, names in out.items()}


def _row(label: str, family: str, platforms: tuple[str, ...], possible: int, valid: int, required: int,
         jobs: set[str], states: dict, store: Store | None, sizes: dict) -> TargetRow:
    if not states:
        return TargetRow(label, family, platforms, possible, valid, required, len(jobs), None, None, None,
                         None, None, None)
    found = [states[j] for j in sorted(jobs) if j in states]
    cached = sum(1 for s in found if s.state == "cached")
    failed = sum(1 for s in found if s.state == "failed")
    blobs = {s.blob for s in found if s.blob}
    measured = [m for m in (_size(b, store, sizes) for b in sorted(blobs)) if m is not None]
    return TargetRow(label, family, platforms, possible, valid, required, len(jobs), len(blobs),
                     sum(m[0] for m in measured), sum(m[1] for m in measured), cached,
                     len(jobs) - cached - failed, failed)


def _size(blob: str, store: Store | None, sizes: dict) -> tuple[int, int] | None:
    if blob not in sizes:
        data = store.get_blob(blob) if store is not None else None
        sizes[blob] = None if data is None else (len(data), len(zlib.compress(data, ZLIB_LEVEL)))
    return sizes[blob]
