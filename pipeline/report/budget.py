"""Budgets: ``--budget`` for the selection and ``[levels.NAME] budget`` from pipeline.toml, with what pushed a scope over."""

from __future__ import annotations

from typing import Protocol

from pipeline.config import CONFIG_NAME
from pipeline.keys.required import KeysResult, KeyUses, RequiredKeys
from pipeline.report.features import contributor_rows
from pipeline.report.rows import AreaRow, BudgetCheck, FeatureRow
from pipeline.world import World

TOP_CULPRITS = 5


class Scoped(Protocol):
    """What the budgets read of a report (:class:`~pipeline.report.funnel.Report`): its scope, its
    levels with their budgets, and the features by the keys they save."""

    @property
    def scope(self) -> dict[str, str | None]: ...

    @property
    def levels(self) -> list[AreaRow]: ...

    @property
    def features(self) -> list[FeatureRow]: ...


def budget_checks(world: World, report: Scoped, found: KeysResult, budget: int | None) -> list[BudgetCheck]:
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


def _level_keys(found: KeysResult, level: str) -> RequiredKeys:
    merged = RequiredKeys()
    for chunk, required in found.by_chunk.items():
        for key, info in required.keys.items():
            if any(s.level == level for s in info.draws):
                merged.keys.setdefault(key, KeyUses()).draws.extend(info.draws)
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
    top = tuple((r.name, r.saved) for r in features[:3] if r.saved > 0)
    return BudgetCheck(kind, name, budget, count, origin, tuple(culprits), top)
