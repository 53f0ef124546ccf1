"""One chunk's keys as the cook keeps them: the ``chunk-keys`` record, and evaluating a scanned chunk.

:class:`ChunkKeys` is what a cook needs of a chunk (its keys with their uses, its
diagnostics, its draw count and the external buffers its files read), stored per chunk
under its fingerprint (:mod:`pipeline.keys.incremental`); :class:`RecordedUses` makes a
record's draws only when something reads them.  :func:`evaluate_chunk` turns one scanned
chunk into its :class:`ChunkKeys` through :class:`StoredEvaluations`, the store-backed memo
of rule evaluations by projected facts; it runs in the cook's process or in a pool worker
(:mod:`pipeline.keys.chunk_pool`) with the same result.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from pipeline.cache.store import Store
from pipeline.digest import stable_hash
from pipeline.errors import Diagnostic
from pipeline.keys.key import PermutationKey
from pipeline.keys.records import EVALUATIONS, decode_uses, encode_uses, features_of
from pipeline.keys.required import KeyUses, RequiredKeys, draw_id, draw_of, required_keys


@dataclass
class ChunkKeys:
    """One chunk as the cook sees it."""

    name: str
    level: str | None                      # the level of its draws; None without draws
    draws: int
    keys: dict[PermutationKey, KeyUses]
    scan_diagnostics: list[Diagnostic]
    rule_diagnostics: list[Diagnostic]
    deps: tuple | None = ()                # (path, mtime_ns, size, inode, ctime_ns) of external buffers read; None: unknown

    def to_record(self) -> dict:
        """The chunk as a ``chunk-keys`` record (layout in :mod:`pipeline.keys.records`)."""
        keys = [[k.shader, k.pass_name, k.features, k.text, k.hash, len(u.draws), u.render_states, u.specialization,
                 [[draw_id(d), st, sp] for d, st, sp in u.bindings]] for k, u in self.keys.items()]
        return {"name": self.name, "level": self.level, "draws": self.draws, "keys": keys,
                "scan_diagnostics": [d.to_json() for d in self.scan_diagnostics],
                "rule_diagnostics": [d.to_json() for d in self.rule_diagnostics], "deps": self.deps}

    @classmethod
    def from_record(cls, record: dict, interned: dict) -> "ChunkKeys":
        """Rebuild a record; equal keys of several chunks share one (interned) PermutationKey."""
        uses = {}
        name, level = str(record["name"]), record["level"]
        draws: dict[tuple, object] = {}  # a draw of several keys (one per pass) is one DrawSource

        def draw(ident) -> object:
            found = draws.get(tuple(ident))
            if found is None:
                found = draws[tuple(ident)] = draw_of(ident, name, level)
            return found
        for shader, pass_name, features, text, digest, count, states, spec, bindings in record["keys"]:
            ident = (shader, pass_name, features_of(features))
            key = interned.get(ident)
            if key is None:
                key = interned[ident] = PermutationKey(*ident)
                key.__dict__.update(text=text, hash=digest)  # its cached properties, computed when recorded
            if len(bindings) != int(count):
                raise ValueError("a chunk-keys record whose bindings are not one per draw")
            uses[key] = RecordedUses(bindings, draw, list(states), {n: list(v) for n, v in spec.items()})
        deps = record["deps"]
        return cls(name, level, int(record["draws"]), uses,
                   [Diagnostic.from_json(d) for d in record["scan_diagnostics"]],
                   [Diagnostic.from_json(d) for d in record["rule_diagnostics"]],
                   None if deps is None else tuple((str(p), *(int(v) for v in stat)) for p, *stat in deps))


class RecordedUses(KeyUses):
    """:class:`KeyUses` read back from a chunk record, its draws made on first use: a cook whose chunk
    outputs are current needs the render states and specialization values, never the draws."""

    def __init__(self, bindings: list, draw, render_states: list[dict], specialization: dict[str, list]):
        self._raw, self._draw, self._made = bindings, draw, None
        self.render_states, self.specialization, self.trace = render_states, specialization, None

    def _bindings(self) -> list:
        if self._made is None:
            self._made = [(self._draw(d), dict(st), dict(sp)) for d, st, sp in self._raw]
            self._raw = self._draw = None
        return self._made

    @property
    def bindings(self) -> list:
        return self._bindings()

    @bindings.setter
    def bindings(self, value: list) -> None:
        self._made = value

    @property
    def draws(self) -> list:
        if "_draws" not in self.__dict__:
            self.__dict__["_draws"] = [d for d, _, _ in self._bindings()]
        return self.__dict__["_draws"]

    @draws.setter
    def draws(self, value: list) -> None:
        self.__dict__["_draws"] = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeyUses):
            return NotImplemented
        return (self.draws, self.render_states, self.specialization, self.bindings) == \
            (other.draws, other.render_states, other.specialization, other.bindings)

    __hash__ = None  # type: ignore[assignment]


class StoredEvaluations(dict):
    """``keys.required_keys``'s memo, backed by the store: rule evaluations by projected facts.

    An edited chunk re-evaluates only the fact combinations no earlier cook saw.
    Entries are keyed by ``base`` (rules, config, code) plus the projected facts, so
    any change to the rules starts afresh.  Rule errors are not stored (they are
    reported again by evaluating again).
    """

    def __init__(self, store: Store, base: str):
        super().__init__()
        self.store, self.base = store, base

    def _key(self, projected: tuple) -> str:
        """The canonical hash of the projected values (models as their JSON, canonical bytes tagged)."""
        return stable_hash([self.base, [["bytes", v.decode()] if isinstance(v, bytes)
                                        else ["value", v.model_dump(mode="json") if isinstance(v, BaseModel) else v]
                                        for v in projected]])

    def get(self, projected, default=None):
        if projected in self:
            return self[projected]
        found = self.store.get(EVALUATIONS, self._key(projected))
        if found is None:
            return default
        try:
            uses = decode_uses(found)
        except (KeyError, TypeError, ValueError):
            return default
        super().__setitem__(projected, uses)
        return uses

    def __setitem__(self, projected, uses) -> None:
        super().__setitem__(projected, uses)
        if isinstance(uses, list):
            self.store.set(EVALUATIONS, self._key(projected), encode_uses(uses))


class Unattributed(Exception):
    """A scan diagnostic names no file of the chunk: the cook's full path handles it."""


def evaluate_chunk(rulesets, info, found, optional: frozenset[str], memo: dict) -> ChunkKeys:
    """The :class:`ChunkKeys` of one folder chunk from its scan (``found``, a
    :class:`~pipeline.scan.scanner.ScanResult` of that chunk alone)."""
    files = set(info.files)
    if any(d.location.file not in files for d in found.diagnostics):
        raise Unattributed(info.name)
    draws = [d for d in found.draws if d.source.chunk == info.name]
    required = required_keys(rulesets, draws, memo) if draws else RequiredKeys()
    level = draws[0].source.level if draws else None
    deps = found.deps.get(info.name) if optional else ()
    return ChunkKeys(info.name, level, len(draws), dict(required.keys), list(found.diagnostics),
                     list(required.diagnostics), deps)
