"""Chunk-level incremental keys for the cook: skip scanning and rules for chunks that did not change.

A cook needs of each chunk only what its outputs hold: the keys it uses with their
draw counts, render states and specialization values, plus its diagnostics and
draw count (a :class:`ChunkKeys`).  That summary is stored per chunk in the
store as a ``chunk-keys`` record (:mod:`pipeline.keys.records`) under a *fingerprint*: the hash of

- :data:`FORMAT_VERSION`, the source of the modules that turn files into keys (scanner,
  glTF reader, facts, rule evaluation), the facts schema;
- the world root, its configuration, the rule sets' files (every byte of the rules
  folder), the optional facts they read and the ``(name, version, code)`` of each
  fact provider they name (:mod:`pipeline.scan.provided`);
- the chunk's name, level and ``[path, *stamp]`` of each of its glTF files
  (one ``stat`` per file, :mod:`pipeline.stamps`, the scan cache's own test), with
  the stamp of each of the file's fact provider sidecars.

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
from collections.abc import Mapping
from pathlib import Path

import msgspec

from pipeline.cache.store import Store
from pipeline.digest import bytes_hash, code_hash, stable_hash
from pipeline.errors import Diagnostic
from pipeline.keys.chunk_keys import ChunkKeys, Unattributed
from pipeline.keys.recorded import StoredDraws
from pipeline.keys.records import defining
from pipeline.keys.chunk_pool import compute_chunks
from pipeline.keys.key import PermutationKey
from pipeline.keys.records import CHUNK_DRAWS, CHUNK_KEYS
from pipeline.keys.required import KeyUses, RequiredKeys, optional_facts
from pipeline.scan import scanner as _scan
from pipeline.scan.provided import providers_of, sidecar_stamps
from pipeline.stamps import stamp_of
from pipeline.world import World

FORMAT_VERSION = 1
_KEY_MODULES = ("facts.py", "fact_providers.py", "chunks.py", "scan", "rules", "keys/evaluate.py", "keys/required.py",
                "keys/chunk_keys.py", "world.py", "config.py", "digest.py", "errors.py")


class CookInput(msgspec.Struct):
    """The one input of a cook and its dry run: its keys, from chunk records (:func:`cook_input`) or
    from a full evaluation (:func:`from_keys`)."""

    chunks: list[str]
    draws: int
    keys: dict[PermutationKey, object]              # every key of every chunk
    by_chunk: dict[str, dict[PermutationKey, KeyUses]]  # chunk -> what each of its keys is used for
    chunk_levels: dict[str, str]                    # chunk -> level its outputs go to
    diagnostics: list[Diagnostic]
    fingerprints: dict[str, str] = msgspec.field(default_factory=dict)  # chunk -> the fingerprint its keys came from


def from_keys(found, world: World) -> CookInput:
    """The cook input of a full :class:`pipeline.api.KeysResult`."""
    levels = {name: world.level_of(name) for name in found.scan.chunks}
    return CookInput(list(found.scan.chunks), len(found.scan.draws), found.required.keys,
                     {name: dict(required.keys) for name, required in found.by_chunk.items()},
                     levels, found.diagnostics)


def _assemble(chunks: list[ChunkKeys], world: World) -> CookInput:
    """The chunks' records together, as the full path would have found them."""
    seen: dict[int, PermutationKey] = {}  # by id: the chunks' keys are interned, so few are hashed as keys
    by_chunk, levels, scan_diags = {}, {}, []
    rule_parts = []
    for c in chunks:
        scan_diags += c.scan_diagnostics
        levels[c.name] = world.level_of(c.name)
        if c.draws:
            by_chunk[c.name] = c.keys
            rule_parts.append(RequiredKeys({}, list(c.rule_diagnostics), 0))
            seen.update(zip(map(id, c.keys), c.keys))
    keys: dict[PermutationKey, object] = dict.fromkeys(seen.values())  # in the order first seen, equal keys once
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


def world_base(world, root: Path, optional: frozenset[str]) -> str:
    """What every chunk fingerprint of ``world`` starts from: the tool's code, the facts schema, the root,
    the configuration, the rule sets' files and the optional facts they read (a farm worker makes it too,
    to compare with the cook's)."""
    providers = [spec.identity for spec in providers_of(world.rulesets)]  # their code and version
    return stable_hash({
        "format": FORMAT_VERSION, "code": _code_hash(), "facts": _scan.facts_schema_hash(), "root": str(root),
        "config": msgspec.to_builtins(world.config, enc_hook=str), "rules": _folder_hash(world.rules_dir),
        "optional": sorted(optional),
    } | ({"fact_providers": providers} if providers else {}))


def _fingerprint(base: str, root: Path, chunk, providers: tuple, known: Mapping[str, list] | None,
                 prefix: str) -> str | None:
    """The chunk's fingerprint, or None when a file cannot be stat-ed (then it always rescans); with fact
    ``providers``, each file's sidecars' stamps too.  ``prefix``: the root's absolute path and a separator;
    ``known``: what a stat walk took just before, each path's ``[path, *stamp]`` by path; a file not there
    is stat-ed."""
    files = chunk.files
    stamps = [known.get(prefix + file) for file in files] if known else [None] * len(files)
    if None in stamps:
        stamps = [found or _entry(prefix + file) for file, found in zip(files, stamps)]
        if None in stamps:
            return None
    sidecars = [sidecar_stamps(providers, root, file) for file in files] if providers else []
    return stable_hash([base, chunk.name, chunk.level, files, stamps, sidecars])


def chunk_fingerprint(world, root: Path, chunk, base: str) -> str | None:
    """The fingerprint of one chunk as this process sees its files (each stat-ed here): what a farm worker
    compares with the cook's before doing the chunk."""
    return _fingerprint(base, root, chunk, providers_of(world.rulesets), None, os.path.join(os.path.abspath(root), ""))


def _entry(path: str) -> list | None:
    """``[path, *stamp]`` of a file, as a stat walk lists it; None when it cannot be stat-ed."""
    stamp = stamp_of(path)
    return None if stamp is None else [path, *stamp]


def _load(store: Store, fingerprint: str | None, name: str, interned: dict) -> ChunkKeys | None:
    if fingerprint is None:
        return None
    try:
        if not store.has(CHUNK_DRAWS, fingerprint):  # a summary without its draws: a miss
            return None
        record = ChunkKeys.from_records(store.get(CHUNK_KEYS, fingerprint), interned, StoredDraws(store, fingerprint),
                                        defining(store))
    except (LookupError, TypeError, ValueError, AttributeError):  # absent or not a record of this layout: a miss
        return None
    if record.name != name or not _scan.deps_fresh(record.deps):
        return None
    return record


# ------------------------------------------------------------------ the incremental path
def cook_input(world, store: Store, *, level: str | None = None, chunk: str | None = None,
               progress=None, jobs: int | None = None, stamps: Mapping[str, tuple] | None = None,
               remote=None) -> CookInput | None:
    """The cook's keys from chunk records, scanning only chunks whose inputs changed.

    None when the target needs the full path (grid-chunked levels, a file target).  ``jobs``: the
    most processes that scan and evaluate missed chunks (None: one per core).  ``stamps``: file stamps by
    absolute path a stat walk took just before (:func:`pipeline.api.cook`), used for the fingerprints.
    ``remote``: a build farm's chunk work, given the missed chunks first
    (:func:`pipeline.keys.chunk_pool.compute_chunks`).
    """
    rulesets = world.rulesets  # a broken rule set stops here, before any scanning
    optional = optional_facts(rulesets)
    target, config = world.select(level=level, chunk=chunk), world.config
    if target.only_file is not None or any(config.grid(c.level) for c in target.chunks):
        return None
    root = target.root
    base = world_base(world, root, optional)
    found: dict[str, ChunkKeys] = {}
    missing = []
    prints = {}
    interned: dict = {}
    providers = providers_of(rulesets)
    prefix = os.path.join(os.path.abspath(root), "")
    for info in target.chunks:
        prints[info.name] = fp = _fingerprint(base, root, info, providers, stamps, prefix)
        record = _load(store, fp, info.name, interned)
        if record is None:
            missing.append(info)
        else:
            found[info.name] = record
    if missing:
        try:
            for record in compute_chunks(world, store, root, missing, optional, base, prints, progress, interned,
                                         jobs, remote):
                found[record.name] = record
        except Unattributed:
            return None
    result = _assemble([found[c.name] for c in target.chunks], world)
    result.diagnostics[:0] = world.folder_warnings(level=level, chunk=chunk)
    # what each chunk's keys are a function of: its fingerprint and its buffers (none when unknown)
    result.fingerprints = {c.name: stable_hash([prints[c.name], found[c.name].deps])
                           for c in target.chunks if prints[c.name] is not None and found[c.name].deps is not None}
    return result
