"""Scanning: world, chunk or file -> draws with facts, through the scan cache.

``scan()`` walks the chunks of a world (see :mod:`pipeline.world`), reads each
glTF file (:mod:`pipeline.scan.gltf`) and returns every draw with its facts, sorted by
(chunk, file, node, mesh, primitive, variant).  A bad file is one located
diagnostic; every other file still scans.

Scan cache (namespace ``"scan"`` of :class:`~pipeline.cache.store.Store`), one entry
per folder chunk, keyed by :func:`chunk_key` (scanner format version, facts
schema, world root, chunk, level, grid, reader limits, requested optional
facts).  The entry is a dict::

    {"files": {file: FileEntry}, "facts": [DrawFacts, ...], "signatures": [str, ...]}

``FileEntry`` is a tuple ``(mtime_ns, size, sha256, deps, rows, diagnostics)``:
``deps`` are ``(path, mtime_ns, size)`` of external buffers read for optional
facts; ``rows`` are ``(node, mesh, primitive, material, variant, fact index)``
into the chunk's de-duplicated ``facts`` list (equal facts pickled once, their
signatures alongside).  A file whose (mtime_ns, size) match is reused without
being opened; otherwise it is read and hashed, and only a changed hash re-parses
it.  An entry that cannot be used (another format, corrupt) is a miss.

Cold scans: chunks without a usable entry are scanned on a process pool (``jobs``,
one worker per core by default; forked, so workers start at once) when they hold
:data:`POOL_MIN_FILES` files or more.  Workers send back the would-be cache entry of
each chunk; the parent rebuilds the draws from it in file order and writes the
cache, so the result does not depend on the number of workers.  Within a scan,
equal fact parts are shared (:class:`~pipeline.scan.gltf.draws.SharedFacts`) and each
distinct facts object's signature is hashed once, from its parts' canonical bytes.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import typing
from collections.abc import Callable, Collection
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path

from pydantic import BaseModel, ValidationError

from pipeline.cache import scan_records
from pipeline.cache.store import Store
from pipeline.config import WorldConfig
from pipeline.digest import bytes_hash, stable_hash
from pipeline.errors import Diagnostic, GltfError, Location
from pipeline.scan.buffers import OPTIONAL_FACTS, BufferData, primitive_facts
from pipeline.scan.chunks import ChunkInfo
from pipeline.scan.facts import Draw, DrawFacts, DrawSource
from pipeline.scan.gltf import parse_gltf, read_bytes
from pipeline.scan.gltf.construct import construct
from pipeline.scan.gltf.draws import FileDraw, SharedFacts, draws_of
from pipeline.scan.gltf.grid import grid_chunk_of

if typing.TYPE_CHECKING:
    from pipeline.world import Selection, World

FORMAT_VERSION = 1
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
    return {**draw.source.model_dump(mode="json"), "facts": draw.facts.model_dump(mode="json")}


def _error_json(diagnostic: Diagnostic) -> dict:
    loc = diagnostic.location
    return {"file": loc.file, "pointer": loc.pointer, "line": loc.line, "col": loc.col, "message": diagnostic.message}


# ---------------------------------------------------------------- one file (pure)
@dataclass
class FileScan:
    """One file's draws (source indices + facts), diagnostics and buffer dependencies."""

    draws: list[FileDraw]
    diagnostics: list[Diagnostic]
    deps: list[Path] = field(default_factory=list)


def scan_bytes(data: bytes, path: Path, *, root: Path, file: str, chunk_name: str, level: str,
               config: WorldConfig, optional_facts: frozenset[str], shared: SharedFacts | None = None) -> FileScan:
    """Draws of one file's content; a bad file gives no draws and one located error.

    ``shared`` (one per scan) shares equal fact objects between files and gives each
    draw its signature.
    """
    try:
        gltf = parse_gltf(data, path, file, config.limits)
        buffers = BufferData(gltf, root, config.limits)
        wanted = optional_facts & OPTIONAL_FACTS
        optional = (lambda m, p: primitive_facts(buffers, m, p, wanted)) if wanted else None
        grid = config.grid(level)
        chunk_of = grid_chunk_of(gltf, level, grid) if grid else (lambda inst: (chunk_name, level))
        return FileScan(draws_of(gltf, chunk_of, optional, shared), buffers.warnings, buffers.dependencies)
    except GltfError as exc:
        return FileScan([], exc.diagnostics)


def scan_file(path: Path, *, root: Path, chunk_name: str, level: str, config: WorldConfig,
              optional_facts: frozenset[str] = frozenset()) -> tuple[list[Draw], list[Diagnostic]]:
    """Draws and diagnostics of one file, without any cache."""
    file = relative_name(Path(path), Path(root))
    try:
        data = read_bytes(Path(path), file, config.limits)
    except GltfError as exc:
        return [], exc.diagnostics
    result = scan_bytes(data, Path(path), root=Path(root), file=file, chunk_name=chunk_name, level=level,
                        config=config, optional_facts=optional_facts)
    return [to_draw(file, d) for d in result.draws], result.diagnostics


def to_draw(file: str, d: FileDraw) -> Draw:
    chunk = d.facts.chunk
    source = DrawSource(file=file, chunk=chunk.name, level=chunk.level, node=d.node, mesh=d.mesh,
                        primitive=d.primitive, material=d.material, variant=d.variant)
    return Draw(source=source, facts=d.facts)


def relative_name(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


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
    for name, info in model.model_fields.items():
        nested = [a for a in typing.get_args(info.annotation) or (info.annotation,)
                  if isinstance(a, type) and issubclass(a, BaseModel)]
        tree[name] = [str(info.annotation), repr(info.default), [_field_tree(a) for a in nested]]
    return tree


def chunk_key(root: Path, chunk: ChunkInfo, config: WorldConfig, optional_facts: frozenset[str]) -> str:
    return stable_hash({
        "format": FORMAT_VERSION, "facts": facts_schema_hash(), "root": str(root), "chunk": chunk.name,
        "level": chunk.level, "grid": config.grid(chunk.level), "limits": config.limits.model_dump(),
        "optional": sorted(optional_facts & OPTIONAL_FACTS),
    })


@dataclass
class _ChunkScan:
    """Scanning one folder chunk against its cache entry."""

    root: Path
    chunk: ChunkInfo
    config: WorldConfig
    optional: frozenset[str]
    old: dict
    files: dict = field(default_factory=dict)
    facts: list = field(default_factory=list)
    signatures: list = field(default_factory=list)
    index: dict = field(default_factory=dict)
    draws: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    read: int = 0
    parsed: int = 0
    cached: int = 0
    shared: SharedFacts = field(default_factory=SharedFacts)

    def __post_init__(self) -> None:
        # Start from the old fact table so reused rows keep their indices; compacted on write.
        self.facts = list(self.old.get("facts", ()))
        self.signatures = list(self.old.get("signatures", ()))
        self.index = {sig: i for i, sig in enumerate(self.signatures)}

    def run(self, files: tuple[str, ...], progress: Callable[[], None]) -> None:
        old_files = self.old.get("files", {})
        for file in files:
            self.scan_one(file, old_files.get(file))
            progress()

    def scan_one(self, file: str, old) -> None:
        path = os.path.join(self.root, file)
        try:
            stat = os.stat(path)
        except OSError as exc:
            self.add_error(file, f"cannot read: {exc.strerror or exc}")
            return
        if old is not None and (old[0], old[1]) == (stat.st_mtime_ns, stat.st_size) and deps_fresh(old[3]):
            self.cached += 1
            return self.keep(file, old)
        self.read_and_scan(file, path, stat, old)

    def read_and_scan(self, file: str, path: str, stat: os.stat_result, old) -> None:
        try:
            data = read_bytes(path, file, self.config.limits)
        except GltfError as exc:
            self.diagnostics.extend(exc.diagnostics)
            return
        self.read += 1
        digest = bytes_hash(data)
        entry = (stat.st_mtime_ns, stat.st_size, digest)
        if old is not None and old[2] == digest and deps_fresh(old[3]):
            return self.keep(file, entry + tuple(old[3:]))
        self.parsed += 1
        result = scan_bytes(data, Path(path), root=self.root, file=file, chunk_name=self.chunk.name,
                            level=self.chunk.level, config=self.config, optional_facts=self.optional,
                            shared=self.shared)
        deps = tuple(_dep(p) for p in result.deps)
        memo: dict[int, int] = {}  # id -> index; the draws keep their facts alive meanwhile
        rows = [(d.node, d.mesh, d.primitive, d.material, d.variant,
                 memo[id(d.facts)] if id(d.facts) in memo
                 else memo.setdefault(id(d.facts), self.intern(d.facts, d.signature)))
                for d in result.draws]
        self.keep(file, (*entry, deps, tuple(rows), tuple(result.diagnostics)), trusted=True)

    def keep(self, file: str, entry: tuple, trusted: bool = False) -> None:
        """Use a file's entry; ``trusted`` rows were just built here (cached ones are validated)."""
        self.files[file] = entry
        self.diagnostics.extend(entry[5])
        self.add_draws(file, entry[4], trusted)

    def add_draws(self, file: str, rows, trusted: bool) -> None:
        new_source, new_draw = (_construct_source, _construct_draw) if trusted else (_new_source, _new_draw)
        for node, mesh, primitive, material, variant, i in rows:
            facts = self.facts[i]
            source = new_source({"file": file, "chunk": facts.chunk.name, "level": facts.chunk.level, "node": node,
                                 "mesh": mesh, "primitive": primitive, "material": material, "variant": variant})
            self.draws.append(new_draw({"source": source, "facts": facts}))

    def intern(self, facts: DrawFacts, signature: str | None = None) -> int:
        """Index of these facts in the chunk's de-duplicated list (equal signatures share one)."""
        signature = signature or facts.signature()
        found = self.index.get(signature)
        if found is None:
            found = self.index[signature] = len(self.facts)
            self.facts.append(facts)
            self.signatures.append(signature)
        return found

    def add_error(self, file: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(Location(file), message))

    def entry(self) -> dict:
        """The cache entry, keeping only the facts some file still uses."""
        used = sorted({row[5] for entry in self.files.values() for row in entry[4]})
        remap = {old: new for new, old in enumerate(used)}
        files = {f: (*e[:4], tuple((*row[:5], remap[row[5]]) for row in e[4]), e[5]) for f, e in self.files.items()}
        return {"files": files, "facts": [self.facts[i] for i in used],
                "signatures": [self.signatures[i] for i in used]}

    def changed(self) -> bool:
        return self.read > 0 or set(self.files) != set(self.old.get("files", {}))

    def payload(self) -> tuple:
        """What a pool worker sends back: everything but the draws, which the parent rebuilds."""
        return self.files, self.facts, self.signatures, self.diagnostics, self.read, self.parsed, self.cached

    @classmethod
    def from_payload(cls, root: Path, chunk: ChunkInfo, config: WorldConfig, optional: frozenset[str],
                     payload: tuple) -> "_ChunkScan":
        """The scan a worker did, with its draws rebuilt in the order the worker made them."""
        work = cls(root, chunk, config, optional, {})
        work.files, work.facts, work.signatures, work.diagnostics, work.read, work.parsed, work.cached = payload
        for file, entry in work.files.items():
            work.add_draws(file, entry[4], trusted=True)
        return work


# Direct validator calls: the same validation as DrawSource(...) / Draw(...), without the
# keyword-argument wrapper (measurably cheaper for the many draws of a cached scan).
_new_source = DrawSource.__pydantic_validator__.validate_python
_new_draw = Draw.__pydantic_validator__.validate_python
# Rows just built from a validated document need no validation at all.
_construct_source = partial(construct, DrawSource)
_construct_draw = partial(construct, Draw)


def _dep(path: Path) -> tuple[str, int, int]:
    stat = os.stat(path)
    return str(path), stat.st_mtime_ns, stat.st_size


def deps_fresh(deps) -> bool:
    """True when every (path, mtime_ns, size) still matches the file on disk."""
    for path, mtime_ns, size in deps:
        try:
            stat = os.stat(path)
        except OSError:
            return False
        if (stat.st_mtime_ns, stat.st_size) != (mtime_ns, size):
            return False
    return True


def _load_entry(store: Store | None, key: str) -> dict:
    """The cached entry, or {} when absent or not of the expected shape."""
    if store is None:
        return {}
    data = store.get(scan_records.SCAN, key)
    if data is None:
        return {}
    try:
        return scan_records.decode(data)
    except (KeyError, TypeError, ValueError, AttributeError, ValidationError):
        store.warn(f"{store.directory}: unreadable scan record {key[:16]}; scanning again")
        return {}


def recorded_deps(store: Store, root: Path, info: ChunkInfo, config: WorldConfig,
                  optional: frozenset[str]) -> tuple | None:
    """External buffers a chunk's files read, ``(path, mtime_ns, size)``, from its scan record.

    None when there is no usable record for exactly these files.
    """
    entry = _load_entry(store, chunk_key(root, info, config, optional))
    if set(entry.get("files", ())) != set(info.files):
        return None
    return tuple(dep for e in entry["files"].values() for dep in e[3])


# ---------------------------------------------------------------- whole scans
def scan(world: World, *, store: Store | None = None, optional_facts: frozenset[str] = frozenset(),
         level: str | None = None, chunk: str | None = None, progress: Progress | None = None,
         jobs: int | None = None, chunks: Collection[str] | None = None) -> ScanResult:
    """Scan the world's scope (all of it, a sub-folder or one file), through ``store`` when given.

    ``chunks`` restricts the scan to those chunk names (folder chunks, or grid cells:
    their level's folders are scanned and only the named cells kept); names that are
    not in the world are ignored.  Chunks without a usable cache entry are scanned on
    a pool of up to ``jobs`` processes (default: one per core) when they hold at least
    :data:`POOL_MIN_FILES` files; the result is the same whatever the number of workers.
    """
    target, config = world.select(level=level, chunk=chunk, chunks=chunks), world.config
    optional = frozenset(optional_facts)
    total = sum(len(_files(c, target)) for c in target.chunks)
    done = [0]

    def step(count: int = 1) -> None:
        for _ in range(count):
            done[0] += 1
            if progress:
                progress(done[0], total)

    keys = [chunk_key(target.root, c, config, optional) for c in target.chunks]
    entries = [_load_entry(store, key) for key in keys]
    cold = [i for i, c in enumerate(target.chunks) if not entries[i] and not target.only_file]
    scans: list[_ChunkScan | None] = [None] * len(target.chunks)

    def finish(i: int) -> None:
        if store is not None and not target.only_file and scans[i].changed():
            store.set(scan_records.SCAN, keys[i], scan_records.encode(scans[i].entry()))

    workers = _workers(jobs, sum(len(target.chunks[i].files) for i in cold))
    if workers > 1:
        _scan_on_pool(target, config, optional, cold, workers, scans, finish, step)
    shared = SharedFacts()
    for i, c in enumerate(target.chunks):
        if scans[i] is None:
            scans[i] = _scan_chunk(target, c, config, optional, entries[i], shared, step)
            finish(i)
    return _result(target, scans)


# Cold chunks are scanned on a process pool when they hold at least this many files
# together, and each worker gets at least half of it: forking a worker and sending
# its facts back costs about as much as scanning a few dozen small files.
POOL_MIN_FILES = 64


def _workers(jobs: int | None, cold_files: int) -> int:
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs <= 1 or cold_files < POOL_MIN_FILES:
        return 1
    return max(1, min(jobs, cold_files // (POOL_MIN_FILES // 2)))


def _pool_context():
    """fork where there is one: workers start at once and inherit the loaded modules."""
    try:
        return multiprocessing.get_context("fork")
    except ValueError:
        return None


_WORKER_SHARED: SharedFacts | None = None


def _pool_task(root: Path, chunks: list[ChunkInfo], config: WorldConfig, optional: frozenset[str]) -> list[tuple]:
    """In a worker: scan chunks without a cache entry; facts are shared across its tasks."""
    global _WORKER_SHARED
    if _WORKER_SHARED is None:
        _WORKER_SHARED = SharedFacts()
    out = []
    for chunk in chunks:
        work = _ChunkScan(root, chunk, config, optional, {}, shared=_WORKER_SHARED)
        work.run(chunk.files, lambda: None)
        out.append(work.payload())
    return out


def _batches(chunks: list[ChunkInfo], cold: list[int], workers: int) -> list[list[int]]:
    """Cold chunk indices in about ``4 * workers`` batches of similar file counts, biggest first."""
    total = sum(len(chunks[i].files) for i in cold)
    size = max(1, total // (4 * workers))
    batches, current, count = [], [], 0
    for i in cold:
        current.append(i)
        count += len(chunks[i].files)
        if count >= size:
            batches.append(current)
            current, count = [], 0
    if current:
        batches.append(current)
    return sorted(batches, key=lambda b: -sum(len(chunks[i].files) for i in b))


def _scan_on_pool(target: Selection, config: WorldConfig, optional: frozenset[str], cold: list[int], workers: int,
                  scans: list, finish: Callable[[int], None], step: Callable[[int], None]) -> None:
    """Scan the ``cold`` chunks on a pool; results land at their index (order is the chunks' order).

    A pool that cannot start or breaks leaves the chunks without a result to the in-process scan.
    """
    try:
        with cf.ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(),
                                    initializer=_reset_worker) as pool:
            futures = {pool.submit(_pool_task, target.root, [target.chunks[i] for i in batch], config, optional): batch
                       for batch in _batches(target.chunks, cold, workers)}
            for future in cf.as_completed(futures):
                for i, payload in zip(futures[future], future.result()):
                    chunk = target.chunks[i]
                    scans[i] = _ChunkScan.from_payload(target.root, chunk, config, optional, payload)
                    finish(i)
                    step(len(chunk.files))
    except (BrokenProcessPool, OSError, AssertionError):  # no pool here (no fork, a daemon process ...)
        pass  # chunks without a result are scanned in this process


def _reset_worker() -> None:
    global _WORKER_SHARED
    _WORKER_SHARED = None


def _files(chunk: ChunkInfo, target: Selection) -> tuple[str, ...]:
    return (target.only_file,) if target.only_file else chunk.files


def _scan_chunk(target: Selection, chunk: ChunkInfo, config: WorldConfig, optional: frozenset[str], entry: dict,
                shared: SharedFacts, step: Callable[[], None]) -> _ChunkScan:
    try:
        work = _ChunkScan(target.root, chunk, config, optional, entry, shared=shared)
        work.run(_files(chunk, target), step)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        if not entry:
            raise
        work = _ChunkScan(target.root, chunk, config, optional, {}, shared=shared)  # an unusable entry is a miss
        work.run(_files(chunk, target), step)
    return work


def _result(target: Selection, scans: list[_ChunkScan]) -> ScanResult:
    draws = [d for s in scans for d in s.draws]
    if target.only_chunk is not None or target.only_chunks is not None:
        draws = [d for d in draws if target.wants(d.source.chunk)]
    if any(s.config.grid(s.chunk.level) for s in scans):
        draws.sort(key=_draw_order)  # grid cells interleave; folder chunks come out in order already
    files = sorted(f for s in scans for f in _files(s.chunk, target))
    chunks = sorted({s.chunk.name for s in scans if not s.config.grid(s.chunk.level)} | {d.source.chunk for d in draws})
    if target.only_chunk is not None or target.only_chunks is not None:
        chunks = [c for c in chunks if target.wants(c)]
    signatures = {id(f): sig for s in scans for f, sig in zip(s.facts, s.signatures)}
    return ScanResult(
        root=target.root, files=files, chunks=chunks, draws=draws,
        diagnostics=[d for s in scans for d in s.diagnostics],
        files_read=sum(s.read for s in scans), files_parsed=sum(s.parsed for s in scans),
        files_cached=sum(s.cached for s in scans), _signatures=signatures,
    )


def _draw_order(draw: Draw) -> tuple:
    s = draw.source
    return s.chunk, s.file, s.node, s.mesh, s.primitive, s.variant is not None, s.variant or ""
