"""One chunk's keys as the cook keeps them: the ``chunk-keys`` record, and evaluating a scanned chunk.

:class:`ChunkKeys` is what a cook needs of a chunk (its keys with their uses, its
diagnostics, its draw count and the external buffers its files read), stored per chunk
under its fingerprint (:mod:`pipeline.keys.incremental`) and read back as a
:class:`~pipeline.keys.recorded.RecordedKeys`, which makes a key's uses and draws only
when something reads them.  :func:`evaluate_chunk` turns one scanned
chunk into its :class:`ChunkKeys` through :class:`StoredEvaluations`, the store-backed memo
of rule evaluations by projected facts; it runs in the cook's process or in a pool worker
(:mod:`pipeline.keys.chunk_pool`) with the same result.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
import orjson

from pipeline.cache.store import Store
from pipeline.digest import canonical_bytes, stable_hash
from pipeline.errors import Diagnostic
from pipeline.facts import Frozen, dump
from pipeline.keys.key import PermutationKey, interned as interned_key
from pipeline.keys.recorded import RecordedKeys, StoredDraws
from pipeline.keys.records import EVALUATIONS, TRACES, decode_uses, encode_uses, features_of, store_missing
from pipeline.keys.required import KeyUses, RequiredKeys, draw_id, required_keys
from pipeline.scan.provided import with_provided_facts


class ChunkKeys(msgspec.Struct):
    """One chunk as the cook sees it."""

    name: str
    level: str | None                      # the level of its draws; None without draws
    draws: int
    keys: Mapping[PermutationKey, KeyUses]  # a RecordedKeys when read back from its records
    scan_diagnostics: list[Diagnostic]
    rule_diagnostics: list[Diagnostic]
    deps: tuple | None = ()                # (path, mtime_ns, size, inode, ctime_ns) of external buffers read; None: unknown

    def to_records(self) -> tuple[dict, dict]:
        """The chunk as its ``chunk-keys`` record and its ``chunk-draws`` record (layouts in
        :mod:`pipeline.keys.records`): what a cook merges, and the per-draw bindings only output
        writers read."""
        keys, bindings = [], []
        tables: tuple[dict, dict] = ({}, {})  # render states, specialization values: canonical bytes -> (position, it)
        at: tuple[dict, dict] = ({}, {})  # id of a dict -> its position: a use's draws share theirs
        ids: dict[int, int] = {}  # id of a draw -> its position in ``draws`` (a binding per pass and axis key)
        draws: list[list] = []  # each draw's draw_id, once
        alive = []  # what the ids above name, kept alive while they are in use
        serialized: dict[int, bytes] = {}  # id of a key's specialization values -> its canonical bytes

        def canon(value: dict) -> bytes:  # made once per object, for both records' tables
            found = serialized.get(id(value))
            if found is None:
                alive.append(value)
                found = serialized[id(value)] = canonical_bytes(value)
            return found

        def shared(value: dict) -> bytes:  # evaluations share these (nobody changes them): once per process
            found = _CANON.get(id(value))
            if found is None or found[0] is not value:
                if _CANON_HELD[0] >= _CANON_BYTES:
                    _CANON.clear()
                    _CANON_HELD[0] = 0
                found = _CANON[id(value)] = (value, canonical_bytes(value))
                _CANON_HELD[0] += len(found[1])
            return found[1]

        def place(n: int, value: dict) -> int:
            found = at[n][id(value)] = tables[n].setdefault(shared(value), (len(tables[n]), value))[0]
            return found

        texts: tuple[dict, dict] = ({}, {})  # the summary's tables: canonical text -> position
        known: dict[int, int] = {}  # id of a render state (or specialization values) -> its position

        def text_of(n: int, value: dict) -> int:
            found = known.get(id(value))
            if found is None:  # a key's own specialization values grow with its uses: never kept past the call
                raw = shared(value) if n == 0 else canon(value)
                found = known[id(value)] = texts[n].setdefault(raw.decode(), len(texts[n]))
            return found

        counts, state_at, spec_at = [], [], []  # the keys' columns besides their hashes (``keys``)
        state_lists: dict[tuple, int] = {}  # a key's render state positions -> their position in ``state_lists``
        for k, u in self.keys.items():
            made = u.bindings
            alive.append(made)
            keys.append(k.hash)
            counts.append(len(made))
            state_at.append(state_lists.setdefault(tuple(text_of(0, state) for state in u.render_states),
                                                   len(state_lists)))
            spec_at.append(text_of(1, u.specialization))
            rows = []  # flat: draw, render state, specialization of each binding in turn
            for d, st, sp in made:
                n = ids.get(id(d))
                if n is None:
                    n = ids[id(d)] = len(draws)
                    draws.append(draw_id(d))
                a = at[0].get(id(st))
                b = at[1].get(id(sp))
                rows += (n, place(0, st) if a is None else a, place(1, sp) if b is None else b)
            bindings.append(rows)
        summary = {"name": self.name, "level": self.level, "draws": self.draws, "keys": keys, "key_draws": counts,
                   "key_states": state_at, "key_specializations": spec_at, "state_lists": list(state_lists),
                   "render_states": list(texts[0]), "specializations": list(texts[1]),
                   "scan_diagnostics": [d.to_json() for d in self.scan_diagnostics],
                   "rule_diagnostics": [d.to_json() for d in self.rule_diagnostics], "deps": self.deps}
        states, specs = ([value for _, value in table.values()] for table in tables)
        return summary, {"keys": keys, "draws": draws, "bindings": bindings,
                         "render_states": states, "specializations": specs}

    def definitions(self) -> dict[str, list]:
        """Key hash -> ``[shader, pass, [[feature, value], ...], key text]`` of its keys (``key`` records)."""
        return {k.hash: [k.shader, k.pass_name, k.features, k.text] for k in self.keys}

    @classmethod
    def from_records(cls, record: dict, interned: dict, draws: dict | StoredDraws,
                     define: Callable[[str], Any]) -> "ChunkKeys":
        """Rebuild a chunk from its ``chunk-keys`` record and its ``chunk-draws`` record (``draws``: the
        record, or a :class:`StoredDraws` that reads it from the store when a key's draws are first
        asked for); ``define``: a key hash -> its definition (:meth:`definitions`; a ``key`` record),
        asked only for keys ``interned`` does not hold yet.  Equal keys of several chunks share one
        (interned) PermutationKey.  Raises KeyError/IndexError/TypeError/ValueError on what is not a record."""
        name, level = str(record["name"]), record["level"]
        source = draws if isinstance(draws, StoredDraws) else StoredDraws.holding(draws)
        source.chunk = (name, level)
        state_table = [_interned_text(interned, t) for t in record["render_states"]]
        spec_table = [_interned_text(interned, t) for t in record["specializations"]]
        digests, counts = record["keys"], record["key_draws"]  # one column per field of a key, in the keys' order
        state_at, spec_at = record["key_states"], record["key_specializations"]
        columns = (digests, counts, state_at, spec_at)
        if not all(isinstance(c, list) and len(c) == len(digests) for c in columns):
            raise ValueError("key columns that are not lists of one length")
        by_hash = interned.setdefault(_BY_HASH, {})
        keys = list(map(by_hash.get, digests))  # its hash names a key: its definition is read once
        for i in [i for i, key in enumerate(keys) if key is None]:
            digest = digests[i]
            shader, pass_name, features, _text = define(digest)
            ident = (str(shader), str(pass_name), features_of(features))
            key = interned.get(ident)
            if key is None:  # the process's one object for it, as rule evaluation gives it
                key = interned[ident] = interned_key(PermutationKey(*ident))
            if key.hash != digest:  # made once per key and process, never taken from the record
                raise ValueError("a key record that is not the key its hash names")
            keys[i] = by_hash[digest] = key

        def states_of(at: list) -> list:  # a chunk's keys share a few lists of render states: each made once
            found = [state_table[n] for n in at]
            return interned.setdefault((_SHARED, tuple(map(id, found))), found)  # by the ids of interned states

        lists = [states_of(at) for at in record["state_lists"]]
        states = list(map(lists.__getitem__, state_at))
        specs = list(map(spec_table.__getitem__, spec_at))
        hashes = list(map(_HASH, keys))  # the interned keys' own strings, shared by every chunk
        if len(set(hashes)) != len(hashes):
            raise ValueError("a chunk record that names a key twice")
        source.hashes = hashes
        deps = record["deps"]
        return cls(name, level, int(record["draws"]), RecordedKeys(source, keys, counts, states, specs),
                   [Diagnostic.from_json(d) for d in record["scan_diagnostics"]],
                   [Diagnostic.from_json(d) for d in record["rule_diagnostics"]],
                   None if deps is None else tuple((str(p), *(int(v) for v in stat)) for p, *stat in deps))


_CANON: dict[int, tuple[dict, bytes]] = {}  # id -> (a shared render state or binding values, its canonical bytes)
_CANON_BYTES = 4 << 20  # the bytes it holds past which it starts afresh: a worker's memory stays flat
_CANON_HELD = [0]

_SHARED = object()  # marks the entries of ``interned`` that hold a render state or specialization values
_BY_HASH = object()  # the entry of ``interned`` that holds its keys by their hash
_HASH = operator.attrgetter("hash")


def _interned_text(interned: dict, text: str) -> dict:
    """One object for equal render states (or specialization values) of every chunk of a cook, from its
    canonical text: the cook's process decodes and holds each once, whatever the number of chunks.
    Nobody changes them."""
    found = interned.get((_SHARED, text))
    if found is None:
        found = interned[(_SHARED, text)] = orjson.loads(text)
        if not isinstance(found, dict):
            raise ValueError("a render state or specialization values that is not an object")
    return found


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
        self._absent: set = set()  # projections a prefetch found no stored evaluation of
        self._traces: set[str] = set()  # trace hashes known to be stored
        self._made: dict = {}  # the keys and traces of the evaluations read: one object each
        self._read_trace = functools.partial(store.get, TRACES)  # the store alone: decoded uses outlive the memo

    def _key(self, projected: tuple) -> str:
        """The canonical hash of the projected values (models as their JSON, canonical bytes tagged)."""
        return stable_hash([self.base, [["bytes", v.decode()] if isinstance(v, bytes)
                                        else ["value", dump(v) if isinstance(v, Frozen) else v]
                                        for v in projected]])

    def prefetch(self, projections) -> None:
        """Read the stored evaluations of ``projections`` together (one query, not one each)."""
        wanted = {}
        for projected in projections:
            if projected not in self:
                key = self._key(projected)
                uses = _DECODED.get(key)
                if uses is not None:
                    super().__setitem__(projected, uses)
                else:
                    wanted[key] = projected
        stored = self.store.get_many(EVALUATIONS, wanted)
        for key, projected in wanted.items():
            try:
                uses = decode_uses(stored[key], self._read_trace, self._made)
            except (KeyError, TypeError, ValueError):
                self._absent.add(projected)
                continue
            _remember(key, uses)
            super().__setitem__(projected, uses)

    def get(self, projected, default=None):
        if projected in self:
            return self[projected]
        if projected in self._absent:
            return default
        key = self._key(projected)
        uses = _DECODED.get(key)  # decoded by an earlier cook of this process (pipeline watch, a library user)
        if uses is None:
            found = self.store.get(EVALUATIONS, key)
            if found is None:
                return default
            try:
                uses = decode_uses(found, self._read_trace, self._made)
            except (KeyError, TypeError, ValueError):
                return default
            _remember(key, uses)
        super().__setitem__(projected, uses)
        return uses

    def __setitem__(self, projected, uses) -> None:
        super().__setitem__(projected, uses)
        if isinstance(uses, list):
            key = self._key(projected)
            records, traces = encode_uses(uses)
            store_missing(self.store, TRACES, traces, self._traces)
            self.store.set(EVALUATIONS, key, records)
            _remember(key, uses)


# evaluations decoded in this process, by record key (rules, config, code and projected facts: a changed
# rule set makes other keys), shared by its cooks; nobody changes a decoded evaluation
_DECODED: dict[str, list] = {}
MAX_DECODED = 20_000


def _remember(key: str, uses: list) -> None:
    if len(_DECODED) >= MAX_DECODED:
        _DECODED.clear()
    _DECODED[key] = uses


class Unattributed(Exception):
    """A scan diagnostic names no file of the chunk: the cook's full path handles it."""


def evaluate_chunk(rulesets, info, found, optional: frozenset[str], memo: dict) -> ChunkKeys:
    """The :class:`ChunkKeys` of one folder chunk from its scan (``found``, a
    :class:`~pipeline.scan.scanner.ScanResult` of that chunk alone)."""
    files = set(info.files)
    if any(d.location.file not in files for d in found.diagnostics):
        raise Unattributed(info.name)
    found = with_provided_facts(found, rulesets)
    draws = [d for d in found.draws if d.source.chunk == info.name]
    required = required_keys(rulesets, draws, memo) if draws else RequiredKeys()
    level = draws[0].source.level if draws else None
    deps = found.deps.get(info.name) if optional else ()
    return ChunkKeys(info.name, level, len(draws), dict(required.keys), list(found.diagnostics),
                     list(required.diagnostics), deps)
