"""The keys many draws require: one evaluation per distinct projection of their facts.

:func:`required_keys` groups draws by the values of only the fact paths the rule sets
read (:class:`FactProjection`), evaluates each group once and merges draws, render
states and specialization values per key (:class:`KeyUses`, what a key is used for);
:func:`keys_of` does it per chunk and unions the chunks (:class:`KeysResult`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Iterable

import msgspec

from pipeline.digest import canonical_bytes
from pipeline.errors import Diagnostic, Location, RuleError
from pipeline.facts import Draw, DrawFacts, DrawSource, Frozen, dump
from pipeline.keys.evaluate import AXES, KeyUse, Overrides, Trace, evaluate
from pipeline.keys.key import PermutationKey
from pipeline.rules.expr import buffer_facts
from pipeline.rules.expr_runtime import get_attr, parse_fact_path, resolve_fact_path
from pipeline.rules.models import RuleSet
from pipeline.heap import collection_paused
from pipeline.scan.provided import with_provided_facts
from pipeline.scan.scanner import ScanResult


# ---------------------------------------------------------------- over many draws
DRAW_FIELDS = ("file", "node", "mesh", "primitive", "material", "variant")  # a draw's id in records and manifests


def draw_id(source: DrawSource) -> list:
    """A draw as records and the runtime contract name it: ``[file, node, mesh, primitive, material, variant]``."""
    return [source.file, source.node, source.mesh, source.primitive, source.material, source.variant]


@dataclass
class KeyUses:
    """What a key is used for, the one shape every stage passes around: the draws that need it
    (``draws``; a fallback key no draw needs has none), the render states and specialization values
    they draw it with, per draw both of these (``bindings``), and a draw's rule trace.  A binding of a
    pass with runtime axes also lists, under :data:`AXES` in its values, the axis combinations it serves.

    Keys evaluated from draws, keys read back from a chunk's record (:mod:`pipeline.keys.incremental`)
    and the keys a cook writes into a chunk manifest (``ManifestEntry.of``) all take this shape."""

    draws: list[DrawSource] = field(default_factory=list)
    render_states: list[dict] = field(default_factory=list)
    specialization: dict[str, list] = field(default_factory=dict)
    trace: Trace | None = field(default=None, compare=False)  # a full evaluation's; records keep none
    bindings: list[tuple[DrawSource, dict, dict]] = field(default_factory=list)  # per draw: render state, spec values

    @property
    def draw_count(self) -> int:
        return len(self.draws)

    def release(self) -> None:
        """Let go of per-draw data that can be read again (nothing here: these draws were evaluated)."""

    def add(self, use: KeyUse, sources: list[DrawSource]) -> None:
        self.draws.extend(sources)
        spec, values = use.binding_values()
        count = len(sources)
        self.bindings.extend(zip(sources, repeat(use.render_state, count), repeat(spec, count)))
        self._add_states((use.render_state,), values)
        if self.trace is None:
            self.trace = use.trace

    def merge(self, other: "KeyUses") -> None:
        """Take in the uses of the same key elsewhere (another chunk, say)."""
        self.draws.extend(other.draws)
        self.bindings.extend(other.bindings)
        self._add_states(other.render_states, other.specialization)
        if self.trace is None:
            self.trace = other.trace

    def _add_states(self, render_states: Iterable[dict], specialization: dict[str, list]) -> None:
        for state in render_states:
            if state not in self.render_states:
                self.render_states.append(state)
                self.render_states.sort(key=canonical_bytes)
        for name, values in specialization.items():
            seen = self.specialization.setdefault(name, [])
            for value in values:
                if value not in seen:
                    seen.append(value)
                    seen.sort(key=repr)


class RequiredKeys(msgspec.Struct):
    keys: dict[PermutationKey, KeyUses] = msgspec.field(default_factory=dict)
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)
    signatures_evaluated: int = 0

    def sorted(self) -> list[tuple[PermutationKey, KeyUses]]:
        return sorted(self.keys.items(), key=lambda item: item[0].text)

    @classmethod
    def union(cls, parts: Iterable["RequiredKeys"]) -> "RequiredKeys":
        """The keys of several parts (chunks) together: draws, states and diagnostics merged."""
        total, seen = cls(), set()
        for part in parts:
            total.signatures_evaluated += part.signatures_evaluated
            _add_unique(total.diagnostics, part.diagnostics, seen)
            for key, info in part.keys.items():
                total.keys.setdefault(key, KeyUses()).merge(info)
        return total

    def to_json(self) -> dict:
        keys = [{**key.to_json(), "render_state": info.render_states, "specialization": info.specialization,
                 "draws": len(info.draws)} for key, info in self.sorted()]
        return {"keys": keys, "errors": [d.to_json() for d in self.diagnostics]}


class DrawErrors(RuleError):
    """What a memo holds for facts some rules failed on: their located errors, and the keys of
    every family and pass that still evaluated (``uses``).  Never stored: evaluated again."""

    def __init__(self, diagnostics: list[Diagnostic], uses: list[KeyUse]):
        super().__init__(diagnostics)
        self.uses = uses


Memo = dict  # projected facts -> list[KeyUse] | RuleError, shared across calls


@collection_paused()
def required_keys(rulesets: Iterable[RuleSet], draws: Iterable[Draw], memo: Memo | None = None,
                  overrides: Overrides | None = None) -> RequiredKeys:
    """Every key the draws need; rules run once per distinct *projected* fact signature.

    Draws are grouped by the values of the fact paths the rule sets read (see
    :class:`FactProjection`), so draws that differ only in facts no rule reads (a
    colour factor, the chunk name) share one evaluation.  Pass the same ``memo`` to
    several calls (one per chunk, say) to share evaluations between them (never
    across different ``overrides``, see :func:`pipeline.keys.evaluate.evaluate`).
    Cyclic garbage collection waits meanwhile, as it does for a chunk's scan: the groups,
    bindings and projections made here form no cycles.
    """
    rulesets = list(rulesets)
    memo = {} if memo is None else memo
    result = RequiredKeys()
    keys = result.keys
    seen: set[str] = set()
    groups = _group(rulesets, draws)
    prefetch = getattr(memo, "prefetch", None)  # a memo backed by the store reads its evaluations together
    if prefetch is not None:
        prefetch(groups)
    for projected, group in groups.items():
        uses = memo.get(projected)
        if uses is None:
            result.signatures_evaluated += 1
            try:
                found = evaluate(rulesets, group[0].facts, overrides)
                uses = DrawErrors(found.errors, list(found)) if found.errors else list(found)
            except RuleError as exc:
                uses = exc
            memo[projected] = uses
        if isinstance(uses, RuleError):
            _add_unique(result.diagnostics, [_for_draws(d, group) for d in uses.diagnostics], seen)
            uses = uses.uses if isinstance(uses, DrawErrors) else []
            if not uses:
                continue
        if not uses:
            _add_unique(result.diagnostics, [_no_family(d) for d in _first_per_file(group)], seen)
        sources = [d.source for d in group]
        for use in uses:
            found = keys.get(use.key)
            if found is None:
                found = keys[use.key] = KeyUses()
            found.add(use, sources)
    return result


def _group(rulesets: list[RuleSet], draws: Iterable[Draw]) -> dict[tuple, list[Draw]]:
    """Draws by projected facts; each distinct facts object is projected once."""
    project = FactProjection.of(rulesets)
    by_object: dict[int, tuple] = {}
    parts: dict[tuple, tuple] = {}  # the draws keep every projected part alive while this runs
    groups: dict[tuple, list[Draw]] = {}
    for draw in draws:
        facts = draw.facts
        projected = by_object.get(id(facts))
        if projected is None:
            projected = by_object[id(facts)] = project(facts, parts)
        groups.setdefault(projected, []).append(draw)
    return groups


def _first_per_file(group: list[Draw]) -> list[Draw]:
    return list({d.source.file: d for d in reversed(group)}.values())[::-1]


class FactProjection:
    """The values of the fact paths a set of rule sets reads, as one hashable tuple.

    Rule expressions can only observe facts through these paths (``has(X)`` reads
    ``mesh.attributes['X']``), so two draws with equal projections get equal keys,
    render states and traces.

    Each part of the facts (mesh, material, node, ...) is projected once: a frozen fact model's values
    are kept with the model itself (so its id names it while they are kept, up to :data:`KEPT_PARTS`
    per part), for every later draw and chunk that shares it; :meth:`of` gives the rule sets' one
    projection, so the chunks of one process share what it keeps.
    """

    KEPT_PARTS = 1 << 14  # per part of the facts; the kept parts start afresh beyond it

    def __init__(self, paths: Iterable[str]):
        self.paths = tuple(sorted(paths))
        self._steps = tuple(parse_fact_path(p) for p in self.paths)
        roots: dict[str, list[int]] = {}
        for i, steps in enumerate(self._steps):
            roots.setdefault(steps[0][1] if steps and not steps[0][0] else "", []).append(i)
        # per part: its paths, those paths' steps below it, and its kept projections (id -> (model, values))
        self._parts = tuple((root, tuple(at), tuple(self._steps[i][1 if root else 0:] for i in at), {})
                            for root, at in sorted(roots.items()))
        # the parts' values concatenated in that order, then put back in path order (when it differs)
        order = [i for _, at, _, _ in self._parts for i in at]
        at_of = {path: place for place, path in enumerate(order)}
        self._reorder = None if order == sorted(order) else itemgetter(*(at_of[i] for i in range(len(order))))

    @classmethod
    def of(cls, rulesets: list[RuleSet]) -> "FactProjection":
        """The projection of the paths the rule sets read (one per set of paths in this process)."""
        paths = frozenset().union(*(rs.compiled.fact_paths() for rs in rulesets))
        found = _PROJECTIONS.get(paths)
        if found is None:
            if len(_PROJECTIONS) >= 16:
                _PROJECTIONS.clear()
            found = _PROJECTIONS[paths] = cls(paths)
        return found

    def __call__(self, facts: DrawFacts, parts: dict | None = None) -> tuple:
        """The projection of ``facts``; with ``parts`` (kept by the caller while every facts object it
        projects is alive), a part that is not a frozen fact model (provided facts, say) is projected
        once per call too."""
        values: tuple = ()
        for root, _, steps, kept in self._parts:
            part = get_attr(facts, root) if root else facts
            found = kept.get(id(part))
            if found is None:
                key = (root, id(part))
                found = parts.get(key) if parts is not None else None
                if found is None:
                    found = (part, tuple(_hashable(resolve_fact_path(part, s)) for s in steps))
                    if isinstance(part, Frozen):  # never changes: kept, and kept alive, for later calls
                        if len(kept) >= self.KEPT_PARTS:
                            kept.clear()
                        kept[id(part)] = found
                    elif parts is not None:
                        parts[key] = found
            values += found[1]
        return values if self._reorder is None else self._reorder(values)


_PROJECTIONS: dict[frozenset, FactProjection] = {}


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return canonical_bytes(value, default=_dump)


def _dump(value: Any) -> Any:
    """A fact model inside a container (``mesh.attributes``) as JSON data."""
    if isinstance(value, Frozen):
        return dump(value)
    raise TypeError(f"not serializable: {type(value).__name__}")


def draw_name(source: DrawSource) -> str:
    """A draw as messages name it: its file (from the world root), primitive and node."""
    return f"{source.file}#/meshes/{source.mesh}/primitives/{source.primitive} (node {source.node})"


def _for_draws(diagnostic: Diagnostic, group: list[Draw]) -> Diagnostic:
    """A rule error of one fact signature, naming the first draw that has it (and how many more)."""
    more = f" and {len(group) - 1} more draw{'s' if len(group) > 2 else ''}" if len(group) > 1 else ""
    message = f"{diagnostic.message} for draw {draw_name(group[0].source)}{more}"
    return Diagnostic(diagnostic.location, message, diagnostic.severity)


def _no_family(draw: Draw) -> Diagnostic:
    src = draw.source
    pointer = f"/meshes/{src.mesh}/primitives/{src.primitive}"
    return Diagnostic(Location(src.file, pointer=pointer), "no shader family selects this draw", "warning")


def _add_unique(into: list[Diagnostic], items: list[Diagnostic], seen: set[str]) -> None:
    for d in items:
        if str(d) not in seen:
            seen.add(str(d))
            into.append(d)


def optional_facts(rulesets: Iterable[RuleSet]) -> frozenset[str]:
    """The optional buffer facts the rule sets read (the scanner computes only these)."""
    read = frozenset().union(*(rs.compiled.fact_paths() for rs in rulesets))
    return frozenset(f for f in buffer_facts() if f in read)


# ---------------------------------------------------------------- per chunk
class KeysResult(msgspec.Struct):
    """The permutation keys a world (or level, or chunk) requires."""

    scan: ScanResult
    required: RequiredKeys
    by_chunk: dict[str, RequiredKeys] = msgspec.field(default_factory=dict)
    # key text -> {"preamble": [[name, value], ...], "<stage>": [...]} (``pipeline keys --defines``)
    defines: dict[str, dict[str, list[list[str]]]] | None = None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self.scan.diagnostics) + list(self.required.diagnostics)

    def to_json(self) -> dict:
        keys = self.required.to_json()["keys"]
        if self.defines is not None:
            keys = [k | {"defines": self.defines.get(k["key"], {})} for k in keys]
        return {"keys": keys, "errors": [d.to_json() for d in self.diagnostics]}


def keys_of(scanned: ScanResult, rulesets: list[RuleSet]) -> KeysResult:
    """Evaluate rule sets over scanned draws per chunk (sharing evaluations), and their union."""
    scanned = with_provided_facts(scanned, rulesets)
    chunks: dict[str, list[Draw]] = defaultdict(list)
    for draw in scanned.draws:
        chunks[draw.source.chunk].append(draw)
    memo: dict = {}
    by_chunk = {name: required_keys(rulesets, chunks[name], memo) for name in sorted(chunks)}
    return KeysResult(scanned, RequiredKeys.union(by_chunk[name] for name in sorted(by_chunk)), by_chunk)
