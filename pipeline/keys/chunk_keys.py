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

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel

from pipeline.cache.store import Store
from pipeline.digest import canonical_bytes, stable_hash
from pipeline.errors import Diagnostic
from pipeline.keys.key import PermutationKey, interned as interned_key
from pipeline.keys.records import CHUNK_DRAWS, EVALUATIONS, decode_uses, encode_uses, features_of
from pipeline.facts import DrawSource
from pipeline.keys.required import DRAW_FIELDS, KeyUses, RequiredKeys, draw_id, required_keys
from pipeline.scan.provided import with_provided_facts


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

    def to_records(self) -> tuple[dict, dict]:
        """The chunk as its ``chunk-keys`` record and its ``chunk-draws`` record (layouts in
        :mod:`pipeline.keys.records`): what a cook merges, and the per-draw bindings only output
        writers read."""
        keys, bindings = [], []
        tables: tuple[dict, dict] = ({}, {})  # render states, specialization values: canonical bytes -> (position, it)
        at: tuple[dict, dict] = ({}, {})  # id of a dict -> its position: a use's draws share theirs
        ids: dict[int, list] = {}  # id of a draw -> its draw_id (a draw has a binding per pass and axis key)
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

        for k, u in self.keys.items():
            made = u.bindings
            alive.append(made)
            keys.append([k.hash, len(made), [text_of(0, state) for state in u.render_states],
                         text_of(1, u.specialization)])
            rows = []
            for d, st, sp in made:
                ident = ids.get(id(d))
                if ident is None:
                    ident = ids[id(d)] = draw_id(d)
                a = at[0].get(id(st))
                b = at[1].get(id(sp))
                rows.append([ident, place(0, st) if a is None else a, place(1, sp) if b is None else b])
            bindings.append(rows)
        summary = {"name": self.name, "level": self.level, "draws": self.draws, "keys": keys,
                   "render_states": list(texts[0]), "specializations": list(texts[1]),
                   "scan_diagnostics": [d.to_json() for d in self.scan_diagnostics],
                   "rule_diagnostics": [d.to_json() for d in self.rule_diagnostics], "deps": self.deps}
        states, specs = ([value for _, value in table.values()] for table in tables)
        return summary, {"keys": [k.hash for k in self.keys], "bindings": bindings, "render_states": states,
                         "specializations": specs}

    def definitions(self) -> dict[str, list]:
        """Key hash -> ``[shader, pass, [[feature, value], ...], key text]`` of its keys (``key`` records)."""
        return {k.hash: [k.shader, k.pass_name, k.features, k.text] for k in self.keys}

    @classmethod
    def from_records(cls, record: dict, interned: dict, draws: "dict | StoredDraws",
                     define: Callable[[str], Any]) -> "ChunkKeys":
        """Rebuild a chunk from its ``chunk-keys`` record and its ``chunk-draws`` record (``draws``: the
        record, or a :class:`StoredDraws` that reads it from the store when a key's draws are first
        asked for); ``define``: a key hash -> its definition (:meth:`definitions`; a ``key`` record),
        asked only for keys ``interned`` does not hold yet.  Equal keys of several chunks share one
        (interned) PermutationKey.  Raises KeyError/IndexError/TypeError/ValueError on what is not a record."""
        name, level = str(record["name"]), record["level"]
        source = draws if isinstance(draws, StoredDraws) else StoredDraws.holding(draws)
        source.chunk = (name, level)
        uses = {}
        hashes = []
        state_table = [_interned_text(interned, t) for t in record["render_states"]]
        spec_table = [_interned_text(interned, t) for t in record["specializations"]]
        lists: dict[tuple, list] = {}
        for i, (digest, count, states, spec) in enumerate(record["keys"]):
            key = interned.get((_SHARED, digest))  # its hash names a key: its definition is read once
            if key is None:
                shader, pass_name, features, _text = define(digest)
                ident = (str(shader), str(pass_name), features_of(features))
                key = interned.get(ident)
                if key is None:  # the process's one object for it, as rule evaluation gives it
                    key = interned[ident] = interned_key(PermutationKey(*ident))
                if key.hash != digest:  # made once per key and process, never taken from the record
                    raise ValueError("a key record that is not the key its hash names")
                interned[(_SHARED, digest)] = key
            hashes.append(key.hash)
            at = tuple(states)  # a chunk's keys share a few lists of render states: each made once
            found = lists.get(at)
            if found is None:
                found = [state_table[n] for n in at]
                found = lists[at] = interned.setdefault((_SHARED, tuple(map(id, found))), found)  # ids of interned
            uses[key] = RecordedUses(source, i, int(count), found, spec_table[spec])
        source.hashes = hashes
        deps = record["deps"]
        return cls(name, level, int(record["draws"]), uses,
                   [Diagnostic.from_json(d) for d in record["scan_diagnostics"]],
                   [Diagnostic.from_json(d) for d in record["rule_diagnostics"]],
                   None if deps is None else tuple((str(p), *(int(v) for v in stat)) for p, *stat in deps))


_CANON: dict[int, tuple[dict, bytes]] = {}  # id -> (a shared render state or binding values, its canonical bytes)
_CANON_BYTES = 4 << 20  # the bytes it holds past which it starts afresh: a worker's memory stays flat
_CANON_HELD = [0]

_SHARED = object()  # marks the entries of ``interned`` that hold a render state or specialization values


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


class StoredDraws:
    """A chunk's ``chunk-draws`` record, read on first use, in whichever process asks (a forked
    worker opens the store on its own: never its parent's connection)."""

    def __init__(self, store: Store | None, fingerprint: str | None):
        self.store, self.fingerprint, self.pid = store, fingerprint, os.getpid()
        self.chunk: tuple[str, str | None] = ("", None)
        self.hashes: list[str] = []
        self._data: list | None = None
        self._sources: dict[tuple, object] = {}  # a draw of several keys (one per pass) is one DrawSource

    @classmethod
    def holding(cls, record: dict) -> "StoredDraws":
        held = cls(None, None)
        held._data = record
        return held

    def bindings(self, i: int, count: int) -> list:
        """Key ``i``'s bindings, its draws made (each once per chunk); the draws of one render state
        (or specialization values) share one dict of it, which nobody changes."""
        if self._data is None:
            self._data = self._read()
        raw = self._data["bindings"][i]
        if len(raw) != count:
            raise ValueError("a chunk-draws record whose bindings are not one per draw")
        states, specs = self._data["render_states"], self._data["specializations"]
        name, level = self.chunk
        made = []
        for ident, state, spec in raw:
            at = tuple(ident)
            source = self._sources.get(at)
            if source is None:
                source = self._sources[at] = RecordedDraw(ident, name, level)
            made.append((source, states[state], specs[spec]))
        return made

    def release(self) -> None:
        """Forget what was read (a cook reads each chunk's draws once, to write its outputs)."""
        if self.fingerprint is not None:
            self._data, self._sources = None, {}

    def _read(self) -> list:
        store = self.store
        if self.pid != os.getpid() and store.on_disk:
            store = _process_store(store.directory)
        data = store.get(CHUNK_DRAWS, self.fingerprint)
        if not isinstance(data, dict) or data.get("keys") != self.hashes:
            raise OSError(errno.ENOENT, f"the cache no longer holds the draws of chunk {self.chunk[0]!r} "
                                        "(cleared during the cook?); cook again", str(store.directory))
        return data


class RecordedDraw:
    """A draw a chunk record names, as its :class:`~pipeline.facts.DrawSource` reads (the same fields, equal
    to it), made without validation: its values were validated when the draw was first scanned, and a
    chunk's outputs make one per draw."""

    __slots__ = ("file", "node", "mesh", "primitive", "material", "variant", "chunk", "level")
    _FIELDS = (*DRAW_FIELDS, "chunk", "level")

    def __init__(self, ident, chunk: str, level: str | None):
        self.file, self.node, self.mesh, self.primitive, self.material, self.variant = ident
        self.chunk, self.level = chunk, level

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RecordedDraw, DrawSource)):
            return self._values() == tuple(getattr(other, name) for name in self._FIELDS)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"RecordedDraw({', '.join(f'{n}={getattr(self, n)!r}' for n in self._FIELDS)})"


_STORES: dict[tuple[int, str], Store] = {}


def _process_store(directory) -> Store:
    """This process's own connection to the store at ``directory``."""
    at = (os.getpid(), str(directory))
    if at not in _STORES:
        _STORES[at] = Store(directory)
    return _STORES[at]


class RecordedUses(KeyUses):
    """:class:`KeyUses` read back from a chunk record, its draws made on first use: a cook whose chunk
    outputs are current needs the render states and specialization values, never the draws, and a
    cook's own process never needs them when its workers write the outputs."""

    def __init__(self, source: StoredDraws, index: int, count: int, render_states: list[dict],
                 specialization: dict[str, list]):
        self._source, self._index, self._count, self._made = source, index, count, None
        self.render_states, self.specialization, self.trace = render_states, specialization, None

    def _bindings(self) -> list:
        if self._made is None:
            self._made = self._source.bindings(self._index, self._count)
        return self._made

    @property
    def draw_count(self) -> int:
        return self._count

    def release(self) -> None:
        """Forget the draws made (they are made again from the record when asked for)."""
        self._made = None
        self.__dict__.pop("_draws", None)
        self._source.release()

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
        key = self._key(projected)
        uses = _DECODED.get(key)  # decoded by an earlier cook of this process (pipeline watch, a library user)
        if uses is None:
            found = self.store.get(EVALUATIONS, key)
            if found is None:
                return default
            try:
                uses = decode_uses(found)
            except (KeyError, TypeError, ValueError):
                return default
            _remember(key, uses)
        super().__setitem__(projected, uses)
        return uses

    def __setitem__(self, projected, uses) -> None:
        super().__setitem__(projected, uses)
        if isinstance(uses, list):
            key = self._key(projected)
            self.store.set(EVALUATIONS, key, encode_uses(uses))
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
