"""The rows of a report: one frozen dataclass per table, each with ``to_json()``."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any


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
    kind: str = "ubershader"          # how the family's keys become source
    materials: int | None = None      # generated families: distinct materials of the keys' draws
    graph_shapes: int | None = None   # materialx: distinct graph shapes of the keys

    def to_json(self) -> dict:
        return _doc(self)


@dataclass(frozen=True)
class TargetRow:
    """One compile target label and family (``family='*'``: every family cooked for it): the funnel down to
    its jobs, and its binaries, bytes and failures (``None`` until cooked)."""

    target: str
    family: str
    platforms: tuple[str, ...]  # the pipeline.toml platforms that ship it (empty without a target matrix)
    possible: int
    valid: int
    required: int
    jobs: int
    binaries: int | None
    bytes: int | None
    compressed: int | None
    cached: int | None
    missing: int | None
    failed: int | None

    @property
    def status(self) -> str:
        """``failed`` (a job of it failed), ``ok`` (every job cached), else ``not cooked``."""
        return "failed" if self.failed else "ok" if self.cached is not None and self.cached == self.jobs \
            else "not cooked"

    def to_json(self) -> dict:
        return _doc(self) | {"status": self.status}


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

    @property
    def name(self) -> str:
        """``family.FEATURE``: how every report names it, and what ``--what-if`` takes."""
        return f"{self.shader}.{self.feature}"

    def to_json(self) -> dict:
        return {**_doc(self), "name": self.name, "saved": self.saved}


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
    pipelines: int = 0                  # distinct pipeline states (render state x specialization values)
    blobs: dict | None = None           # stage blob digest -> bytes, when cooked (what --since sums)

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
    features: tuple[tuple[str, int], ...] = ()  # (family.FEATURE, keys saved if dynamic)

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
    warning: str | None = None  # the earlier report covered another scope
    totals: dict | None = None  # keys, pipeline states and blob bytes added and removed (report/since.py)

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
                "files": self.by_file(), "warning": self.warning, "totals": self.totals}


def _doc(row: Any) -> dict:
    out = {}
    for name in row.__dataclass_fields__:
        value = getattr(row, name)
        out["pass" if name == "pass_name" else name] = list(value) if isinstance(value, tuple) else value
    return out
