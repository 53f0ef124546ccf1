"""Chunk-level incremental keys for the cook: skip scanning and rules for chunks that did not change.

A cook needs of each chunk only what its outputs hold: the keys it uses with their
draw counts, render states and specialization values, plus its diagnostics and
draw count (a :class:`ChunkKeys`).  That summary is stored per chunk in the
store as a ``chunk-keys`` record (:mod:`pipeline.keys.records`) under a *fingerprint*: the hash of

- :data:`FORMAT_VERSION`, the source of the modules that turn files into keys (scanner,
  glTF reader, facts, rule evaluation), the facts schema;
- the world root, its configuration, the rule sets' files (every byte of the rules
  folder) and the optional facts they read;
- the chunk's name, level and ``(file, *stamp)`` of each of its glTF files
  (one ``stat`` per file, :mod:`pipeline.stamps`, the scan cache's own test).

The record also lists the external buffers its files read for optional facts
(``(path, *stamp)``, from the scan cache entry); a changed buffer is a miss.
Chunks that miss are scanned (through the scan cache) and evaluated as in
:func:`pipeline.api.keys_of`, then recorded.  The cook's numbers and outputs are the
same as the full path's; report and explain keep the full path (they need draws).

Worlds with grid-chunked levels or a single-file target take the full path
(:func:`cook_input` returns None).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from pipeline.keys.records import (
    CHUNK_KEYS,
    EVALUATIONS,
    decode_uses,
    encode_uses,
    features_of,
)
from pipeline.cache.store import Store
from pipeline.digest import bytes_hash, code_hash, stable_hash
from pipeline.errors import Diagnostic
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeyUses, RequiredKeys, draw_id, draw_of, optional_facts, required_keys
from pipeline.scan import scanner as _scan
from pipeline.stamps import stamp_of
from pipeline.world import World

FORMAT_VERSION = 1
_KEY_MODULES = ("facts.py", "chunks.py", "scan", "rules", "keys/evaluate.py", "keys/required.py", "world.py",
                "config.py", "digest.py", "errors.py")


# ------------------------------------------------------------------ data
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


@dataclass
class CookInput:
    """The one input of a cook and its dry run: its keys, from chunk records (:func:`cook_input`) or
    from a full evaluation (:func:`from_keys`)."""

    chunks: list[str]
    draws: int
    keys: dict[PermutationKey, object]              # every key of every chunk
    by_chunk: dict[str, dict[PermutationKey, KeyUses]]  # chunk -> what each of its keys is used for
    chunk_levels: dict[str, str]                    # chunk -> level its outputs go to
    diagnostics: list[Diagnostic]
    fingerprints: dict[str, str] = field(default_factory=dict)  # chunk -> the fingerprint its keys came from


def from_keys(found, world: World) -> CookInput:
    """The cook input of a full :class:`pipeline.api.KeysResult`."""
    levels = {name: world.level_of(name) for name in found.scan.chunks}
    return CookInput(list(found.scan.chunks), len(found.scan.draws), found.required.keys,
                     {name: dict(required.keys) for name, required in found.by_chunk.items()},
                     levels, found.diagnostics)


def _assemble(chunks: list[ChunkKeys], world: World) -> CookInput:
    """The chunks' records together, as the full path would have found them."""
    keys: dict[PermutationKey, object] = {}
    by_chunk, levels, scan_diags = {}, {}, []
    rule_parts = []
    for c in chunks:
        scan_diags += c.scan_diagnostics
        levels[c.name] = world.level_of(c.name)
        if c.draws:
            by_chunk[c.name] = c.keys
            rule_parts.append(RequiredKeys({}, list(c.rule_diagnostics), 0))
            for key in c.keys:
                keys.setdefault(key, None)
    rule_diags = RequiredKeys.union(rule_parts).diagnostics  # de-duplicated as the full path does
    return CookInput([c.name for c in chunks], sum(c.draws for c in chunks), keys, by_chunk, levels,
                     scan_diags + rule_diags)


# ------------------------------------------------------------------ fingerprints
def _code_hash() -> str:
    """Hash of the modules that turn files into keys: a changed scanner or evaluator misses every record."""
    return code_hash(*_KEY_MODULES)


def _folder_hash(folder: Path) -> str:
    """Hash of every file (name and bytes) under ``folder``, hidden ones included."""
    folder = Path(folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return stable_hash([[p.relative_to(folder).as_posix(), bytes_hash(p.read_bytes())] for p in files])


def _base(world, root: Path, optional: frozenset[str]) -> str:
    return stable_hash({
        "format": FORMAT_VERSION, "code": _code_hash(), "facts": _scan.facts_schema_hash(), "root": str(root),
        "config": world.config.model_dump(mode="json"), "rules": _folder_hash(world.rules_dir),
        "optional": sorted(optional),
    })


def _fingerprint(base: str, root: Path, chunk) -> str | None:
    """The chunk's fingerprint, or None when a file cannot be stat-ed (then it always rescans)."""
    stats = []
    for file in chunk.files:
        stamp = stamp_of(os.path.join(root, file))
        if stamp is None:
            return None
        stats.append((file, *stamp))
    return stable_hash([base, chunk.name, chunk.level, stats])


def _load(store: Store, fingerprint: str | None, name: str, interned: dict) -> ChunkKeys | None:
    if fingerprint is None:
        return None
    try:
        record = ChunkKeys.from_record(store.get(CHUNK_KEYS, fingerprint), interned)
    except (KeyError, TypeError, ValueError, AttributeError):  # absent or not a record of this layout: a miss
        return None
    if record.name != name or not _scan.deps_fresh(record.deps):
        return None
    return record


# ------------------------------------------------------------------ the incremental path
def cook_input(world, store: Store, *, level: str | None = None, chunk: str | None = None,
               progress=None) -> CookInput | None:
    """The cook's keys from chunk records, scanning only chunks whose inputs changed.

    None when the target needs the full path (grid-chunked levels, a file target).
    """
    rulesets = world.rulesets  # a broken rule set stops here, before any scanning
    optional = optional_facts(rulesets)
    target, config = world.select(level=level, chunk=chunk), world.config
    if target.only_file is not None or any(config.grid(c.level) for c in target.chunks):
        return None
    root = target.root
    base = _base(world, root, optional)
    found: dict[str, ChunkKeys] = {}
    missing = []
    prints = {}
    interned: dict = {}
    for info in target.chunks:
        prints[info.name] = fp = _fingerprint(base, root, info)
        record = _load(store, fp, info.name, interned)
        if record is None:
            missing.append(info)
        else:
            found[info.name] = record
    if missing:
        try:
            records = _compute(world, store, target, config, missing, optional, level, chunk, progress,
                               _StoredEvaluations(store, base))
        except _Unattributed:
            return None
        for record in records:
            found[record.name] = record
            if prints[record.name] is not None and record.deps is not None:
                store.set(CHUNK_KEYS, prints[record.name], record.to_record())
    result = _assemble([found[c.name] for c in target.chunks], world)
    result.diagnostics[:0] = world.folder_warnings(level=level, chunk=chunk)
    # what each chunk's keys are a function of: its fingerprint and its buffers (none when unknown)
    result.fingerprints = {c.name: stable_hash([prints[c.name], found[c.name].deps])
                           for c in target.chunks if prints[c.name] is not None and found[c.name].deps is not None}
    return result


def _compute(world, store: Store, target, config, missing, optional, level, chunk, progress,
             memo: dict) -> list[ChunkKeys]:
    """Scan and evaluate the chunks whose records missed."""
    names = [c.name for c in missing]
    results = [_scan.scan(world, store=store, optional_facts=optional, level=level,
                          chunk=chunk, chunks=names, progress=progress)]
    files_of = {f: c.name for c in missing for f in c.files}
    draws: dict[str, list] = {name: [] for name in names}
    diags: dict[str, list[Diagnostic]] = {name: [] for name in names}
    for result in results:
        for d in result.draws:
            if d.source.chunk in draws:
                draws[d.source.chunk].append(d)
        for d in result.diagnostics:
            owner = files_of.get(d.location.file)
            if owner is not None:
                diags[owner].append(d)
            elif not any(d.location.file in c.files for c in target.chunks):
                raise _Unattributed  # a diagnostic of no chunk's file: the full path handles it
    records = []
    for info in missing:
        chunk_draws = draws[info.name]
        required = required_keys(world.rulesets, chunk_draws, memo) if chunk_draws else RequiredKeys()
        level_of = chunk_draws[0].source.level if chunk_draws else None
        records.append(ChunkKeys(info.name, level_of, len(chunk_draws), dict(required.keys), diags[info.name],
                                 list(required.diagnostics), _deps(results, info.name, optional)))
    return records


class _StoredEvaluations(dict):
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


class _Unattributed(Exception):
    """A scan diagnostic names no file of the target: the full path handles it."""


def _deps(results: list, chunk: str, optional: frozenset[str]) -> tuple | None:
    """External buffers the chunk's files read, as this scan found them; () without optional facts.

    None when the scan cannot tell (then the chunk is not recorded).
    """
    if not optional:
        return ()
    for result in results:
        if chunk in result.deps:
            return result.deps[chunk]
    return None
