"""Scanning: world, chunk or file -> draws with facts, through the scan cache.

``scan()`` walks the chunks of a world (see :mod:`pipeline.world`), reads each
glTF file (:mod:`pipeline.scan.gltf`) and returns every draw with its facts, sorted by
(chunk, file, node, mesh, primitive, variant).  A bad file is one located
diagnostic; every other file still scans.

Scan records (:mod:`pipeline.scan.records`, layout documented there), one per
folder chunk, keyed by :func:`chunk_key` (scanner format version, facts schema, world
root, chunk, level, grid, reader limits, requested optional facts).  A file whose
stamp (:mod:`pipeline.stamps`) matches is reused without being opened; otherwise it is read and
hashed, and only a changed hash re-parses it (:mod:`pipeline.scan.chunk_scan`).  A
record that cannot be used (another version, corrupt) is a miss.

Cold scans: chunks without a usable entry are scanned on a process pool (``jobs``,
one worker per core by default; forked, so workers start at once) when they hold
:data:`pipeline.scan.pool.POOL_MIN_FILES` files or more.  Workers send back the would-be cache entry of
each chunk; the parent rebuilds the draws from it in file order and writes the
cache, so the result does not depend on the number of workers.  Within a scan,
equal fact parts are shared (:class:`~pipeline.scan.gltf.draws.SharedFacts`) and each
distinct facts object's signature is hashed once, from its parts' canonical bytes.

Chunk facts that depend on every file of a chunk (``chunk.lights``, the light nodes
of all its files or of a grid cell) are set once the chunk's files are scanned, from
each file's recorded light counts; so a file scope scans (through the cache) every
file of its chunk and keeps that file's draws.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import msgspec

from pipeline.cache.store import Store
from pipeline.chunks import ChunkInfo
from pipeline.config import WorldConfig
from pipeline.digest import stable_hash
from pipeline.errors import Diagnostic
from pipeline.facts import Draw, DrawFacts, Lights, dump, fact_fields, is_model, replace
from pipeline.scan import records as scan_records
from pipeline.scan.buffers import OPTIONAL_FACTS
from pipeline.heap import collection_paused
from pipeline.scan.chunk_scan import ChunkScan
from pipeline.scan.files import (  # noqa: F401
    FileScan,
    deps_fresh,
    relative_name,
    scan_bytes,
    scan_file,
    to_draw,
)
from pipeline.scan.gltf.draws import LIGHT_TYPES, SharedFacts
from pipeline.scan.pool import pool_workers, scan_on_pool

from pipeline.world import Selection

if typing.TYPE_CHECKING:
    from pipeline.world import World

FORMAT_VERSION = 2
Progress = Callable[[int, int], None]


# ---------------------------------------------------------------- result
@dataclass
class ScanResult:
    """What a scan found; paths are relative to ``root``, '/'-separated."""

    root: Path
    files: list[str]
    chunks: list[str]
    draws: list[Draw]
    diagnostics: list[Diagnostic]
    files_read: int = 0
    files_parsed: int = 0
    files_cached: int = 0
    _signatures: dict[int, str] = field(default_factory=dict, repr=False)
    deps: dict[str, tuple] = field(default_factory=dict, repr=False)  # folder chunk -> external buffers read

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity != "error"]

    def signature(self, draw: Draw) -> str:
        """``draw.facts.signature()``, computed once per distinct facts object."""
        key = id(draw.facts)
        if key not in self._signatures:
            self._signatures[key] = draw.facts.signature()
        return self._signatures[key]

    def by_signature(self) -> dict[str, list[Draw]]:
        """Draws grouped by fact signature (rules run once per group)."""
        groups: dict[str, list[Draw]] = {}
        for draw in self.draws:
            groups.setdefault(self.signature(draw), []).append(draw)
        return groups

    @property
    def unique_signatures(self) -> int:
        return len(self.by_signature())

    def to_json(self) -> dict:
        """The ``pipeline scan --json`` document."""
        return {
            "files": len(self.files),
            "chunks": len(self.chunks),
            "draws": [_draw_json(d) for d in self.draws],
            "errors": [_error_json(d) for d in self.errors],
        }


def _draw_json(draw: Draw) -> dict:
    return {**dump(draw.source), "facts": dump(draw.facts)}


def _error_json(diagnostic: Diagnostic) -> dict:
    loc = diagnostic.location
    return {"file": loc.file, "pointer": loc.pointer, "line": loc.line, "col": loc.col, "message": diagnostic.message}


# ---------------------------------------------------------------- cache entries
@cache
@cache
def facts_schema_hash() -> str:
    """Hash of the facts model: a changed facts.py invalidates every scan entry.

    The model's field tree (names and annotations, recursively) is hashed; building
    the full JSON schema cost more than the rest of a no-op cook's start.
    """
    return stable_hash(_field_tree(DrawFacts))


def _field_tree(model) -> dict:
    tree = {}
    for name, info in fact_fields(model).items():
        nested = [a for a in typing.get_args(info.annotation) or (info.annotation,) if is_model(a)]
        tree[name] = [str(info.annotation), repr(info.default), [_field_tree(a) for a in nested]]
    return tree


def chunk_key(root: Path, chunk: ChunkInfo, config: WorldConfig, optional_facts: frozenset[str]) -> str:
    return stable_hash({
        "format": FORMAT_VERSION, "facts": facts_schema_hash(), "root": str(root), "chunk": chunk.name,
        "level": chunk.level, "grid": config.grid(chunk.level), "limits": msgspec.structs.asdict(config.limits),
        "optional": sorted(optional_facts & OPTIONAL_FACTS),
    } | ({"scenes": config.scenes} if config.scenes != "all" else {}))


def _load_entry(store: Store | None, key: str) -> dict:
    """The cached entry, or {} when absent or not of the expected shape."""
    if store is None:
        return {}
    data = store.get(scan_records.SCAN, key)
    if data is None:
        return {}
    try:
        return scan_records.decode(data)
    except (KeyError, TypeError, ValueError, AttributeError):
        store.warn(f"{store.directory}: unreadable scan record {key[:16]}; scanning again")
        return {}


# ---------------------------------------------------------------- whole scans
def scan(world: World, *, store: Store | None = None, optional_facts: frozenset[str] = frozenset(),
         level: str | None = None, chunk: str | None = None, progress: Progress | None = None,
         jobs: int | None = None, chunks: Collection[str] | None = None, verify: bool = False) -> ScanResult:
    """Scan the world's scope (all of it, a sub-folder or one file), through ``store`` when given.

    ``chunks`` restricts the scan to those chunk names (folder chunks, or grid cells:
    their level's folders are scanned and only the named cells kept); names that are
    not in the world are ignored.  Chunks without a usable cache entry are scanned on
    a pool of up to ``jobs`` processes (default: one per core) when they hold at least
    :data:`pipeline.scan.pool.POOL_MIN_FILES` files; the result is the same whatever the number of workers.
    ``verify`` re-reads every file (and what it references) instead of trusting the
    recorded stats, and records what it finds.
    """
    target, config = world.select(level=level, chunk=chunk, chunks=chunks), world.config
    optional = frozenset(optional_facts)
    total = sum(len(c.files) for c in target.chunks)  # a file scope too: its chunk's lights need them all
    done = [0]

    def step(count: int = 1) -> None:
        for _ in range(count):
            done[0] += 1
            if progress:
                progress(done[0], total)

    keys = [chunk_key(target.root, c, config, optional) for c in target.chunks]
    entries = [_load_entry(store, key) for key in keys]  # with ``verify`` only for files that no longer read
    cold = [i for i, c in enumerate(target.chunks) if verify or not entries[i]]
    scans: list[ChunkScan | None] = [None] * len(target.chunks)
    shared = SharedFacts()

    def finish(i: int) -> None:
        if store is not None and scans[i].changed():
            store.set(scan_records.SCAN, keys[i], scan_records.encode(scans[i].entry(), shared.canonical.get))

    workers = pool_workers(jobs, sum(len(target.chunks[i].files) for i in cold))
    if workers > 1:
        scan_on_pool(target, config, optional, cold, workers, scans, finish, step, entries if verify else None)
    for i, c in enumerate(target.chunks):
        if scans[i] is None:
            with collection_paused():
                scans[i] = _scan_chunk(target, c, config, optional, entries[i], shared, step, verify)
                finish(i)
    result = _result(target, scans)
    result.diagnostics[:0] = world.folder_warnings(level=level, chunk=chunk, chunks=chunks)
    return result


def scan_chunk(root: Path, chunk: ChunkInfo, config: WorldConfig, optional: frozenset[str], store: Store | None,
               shared: SharedFacts) -> ScanResult:
    """One folder chunk through its scan record (read, and written when the scan changed it): what a
    :func:`scan` of that chunk alone finds, without the world's folder warnings."""
    target = Selection(root, [chunk])
    key = chunk_key(root, chunk, config, optional)
    with collection_paused():
        work = _scan_chunk(target, chunk, config, optional, _load_entry(store, key), shared, lambda: None)
        if store is not None and work.changed():
            store.set(scan_records.SCAN, key, scan_records.encode(work.entry(), shared.canonical.get))
        return _result(target, [work])


def _scan_chunk(target: Selection, chunk: ChunkInfo, config: WorldConfig, optional: frozenset[str], entry: dict,
                shared: SharedFacts, step: Callable[[], None], verify: bool = False) -> ChunkScan:
    try:
        work = ChunkScan(target.root, chunk, config, optional, entry, shared=shared, verify=verify)
        work.run(chunk.files, step)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        if not entry:
            raise
        work = ChunkScan(target.root, chunk, config, optional, {}, shared=shared)  # an unusable entry is a miss
        work.run(chunk.files, step)
    return work


def _result(target: Selection, scans: list[ChunkScan]) -> ScanResult:
    signatures = {id(f): sig for s in scans for f, sig in zip(s.facts, s.signatures)}
    draws = _with_chunk_lights([d for s in scans for d in s.draws], scans, signatures)
    diagnostics = [d for s in scans for d in s.diagnostics]
    if target.only_chunk is not None or target.only_chunks is not None:
        draws = [d for d in draws if target.wants(d.source.chunk)]
    if target.only_file is not None:
        draws = [d for d in draws if d.source.file == target.only_file]
        diagnostics = [d for d in diagnostics if d.location.file == target.only_file]
    if any(s.config.grid(s.chunk.level) for s in scans):
        draws.sort(key=_draw_order)  # grid cells interleave; folder chunks come out in order already
    files = [target.only_file] if target.only_file else sorted(f for s in scans for f in s.chunk.files)
    chunks = sorted({s.chunk.name for s in scans if not s.config.grid(s.chunk.level)} | {d.source.chunk for d in draws})
    if target.only_chunk is not None or target.only_chunks is not None:
        chunks = [c for c in chunks if target.wants(c)]
    return ScanResult(
        root=target.root, files=files, chunks=chunks, draws=draws,
        diagnostics=diagnostics,
        files_read=sum(s.read for s in scans), files_parsed=sum(s.parsed for s in scans),
        files_cached=sum(s.cached for s in scans), _signatures=signatures, deps=_chunk_deps(scans),
    )


def _chunk_deps(scans: list[ChunkScan]) -> dict[str, tuple]:
    """External buffers each folder chunk's files read, ``(path, *stamp)``, as its scan record keeps them;
    a chunk some of whose files gave nothing to record (so no record covers exactly its files) is left out."""
    return {s.chunk.name: tuple(dep for entry in s.files.values() for dep in entry[3])
            for s in scans if set(s.files) == set(s.chunk.files)}


def _with_chunk_lights(draws: list[Draw], scans: list[ChunkScan], signatures: dict[int, str]) -> list[Draw]:
    """Draws whose chunk (or grid cell) holds lights get them as ``chunk.lights``, summed over
    every file of the scan; ``signatures`` (by facts id) follows the new facts."""
    totals: dict[str, list[int]] = {}
    for s in scans:
        for entry in s.files.values():
            for name, *counts in entry[6]:
                total = totals.setdefault(name, [0, 0, 0])
                for i, n in enumerate(counts):
                    total[i] += n
    lit = {name: Lights(**dict(zip(LIGHT_TYPES, t))) for name, t in totals.items() if any(t)}
    if not lit:
        return draws
    relit: dict[int, DrawFacts] = {}
    out = []
    for draw in draws:
        lights = lit.get(draw.facts.chunk.name)
        if lights is None:
            out.append(draw)
            continue
        facts = relit.get(id(draw.facts))
        if facts is None:
            old = draw.facts
            facts = relit[id(old)] = replace(old, chunk=replace(old.chunk, lights=lights))
            signatures.pop(id(old), None)
            signatures[id(facts)] = facts.signature()
        out.append(replace(draw, facts=facts))
    return out


def _draw_order(draw: Draw) -> tuple:
    s = draw.source
    return s.chunk, s.file, s.node, s.mesh, s.primitive, s.variant is not None, s.variant or ""
