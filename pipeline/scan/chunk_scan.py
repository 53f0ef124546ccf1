"""Scanning one folder chunk against its scan record: reuse unchanged files, read the rest.

A file that was read well before and now cannot be read as glTF keeps its last good
entry (draws, facts, lights) in the chunk, with the new error reported instead of the
old warnings, so outputs shipped from that chunk keep the keys they had; the record
keeps that entry's stat and digest, so the file is read (and its error reported) again
on every scan until it is fixed or deleted.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.chunks import ChunkInfo
from pipeline.config import WorldConfig
from pipeline.digest import bytes_hash
from pipeline.errors import Diagnostic, GltfError, Location
from pipeline.facts import Draw, DrawFacts, DrawSource, load
from pipeline.fileio import InsideRoots
from pipeline.scan.files import deps_fresh, scan_bytes, stat_dep
from pipeline.scan.gltf import read_bytes
from pipeline.scan.gltf.draws import SharedFacts
from pipeline.stamps import of_stat, why_dirty

if typing.TYPE_CHECKING:
    pass


@dataclass
class ChunkScan:
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
    inside: InsideRoots | None = None
    verify: bool = False  # trust no recorded stat or digest: read and parse every file again
    grid: object = field(default=None, init=False)  # the level's grid cell size, once a file is parsed

    def __post_init__(self) -> None:
        self.grid = _UNKNOWN
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
        if old is not None and not self.verify and why_dirty(old[0], of_stat(stat)) is None and deps_fresh(old[3]):
            self.cached += 1
            return self.keep(file, old)
        self.read_and_scan(file, path, stat, old)

    def read_and_scan(self, file: str, path: str, stat: os.stat_result, old) -> None:
        try:
            if self.inside is None:
                self.inside = InsideRoots(self.config.allowed_paths(self.root))
            self.inside.check(path, file, error=GltfError, what="glTF file")
            data = read_bytes(path, file, self.config.limits)
        except GltfError as exc:
            return self.keep_last_good(file, old, exc.diagnostics)
        self.read += 1
        digest = bytes_hash(data)
        entry = (of_stat(stat), stat.st_size, digest)
        if old is not None and not self.verify and old[2] == digest and deps_fresh(old[3]):
            return self.keep(file, entry + tuple(old[3:]))
        self.parsed += 1
        if self.grid is _UNKNOWN:
            self.grid = self.config.grid(self.chunk.level)
        result = scan_bytes(data, Path(path), root=self.root, file=file, chunk_name=self.chunk.name,
                            level=self.chunk.level, config=self.config, optional_facts=self.optional,
                            shared=self.shared, grid=self.grid)
        if result.failed and old is not None and (old[4] or old[6]):
            return self.keep_last_good(file, old, result.diagnostics, entry)
        deps = tuple(stat_dep(p) for p in result.deps)
        memo: dict[int, int] = {}  # id -> index; the draws keep their facts alive meanwhile
        rows = [(d.node, d.mesh, d.primitive, d.material, d.variant,
                 memo[id(d.facts)] if id(d.facts) in memo
                 else memo.setdefault(id(d.facts), self.intern(d.facts, d.signature)))
                for d in result.draws]
        self.keep(file, (*entry, deps, tuple(rows), tuple(result.diagnostics), result.lights), trusted=True)

    def keep_last_good(self, file: str, old, errors: list[Diagnostic], read: tuple | None = None) -> None:
        """A file that cannot be read as glTF now: its errors, with the draws of its last good entry.

        ``read`` (stat, size, digest) is what was read: the entry is recorded under it, so an
        unchanged broken file is not parsed again.  Without it (the file could not be read at
        all, which may depend on settings) the old entry is kept as it was, and the file is
        read again next time.
        """
        if old is None:
            self.diagnostics.extend(errors)
            return
        self.keep(file, (*read, old[3], old[4], tuple(errors), *old[6:]) if read else (*old[:5], tuple(errors), *old[6:]))
        if read is None:
            self.files[file] = old

    def keep(self, file: str, entry: tuple, trusted: bool = False) -> None:
        """Use a file's entry; ``trusted`` rows were just built here (cached ones are validated)."""
        self.files[file] = entry
        self.diagnostics.extend(entry[5])
        self.add_draws(file, entry[4], trusted)

    def add_draws(self, file: str, rows, trusted: bool) -> None:
        """The draws of ``rows``: a cache record's (``trusted`` False) are checked, every type; rows just
        built from a checked document need not be.  Their facts are checked already (:func:`load`)."""
        for node, mesh, primitive, material, variant, i in rows:
            facts = self.facts[i]
            values = {"file": file, "chunk": facts.chunk.name, "level": facts.chunk.level, "node": node,
                      "mesh": mesh, "primitive": primitive, "material": material, "variant": variant}
            source = DrawSource(**values) if trusted else load(DrawSource, values)
            self.draws.append(Draw(source=source, facts=facts))

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
        if len(used) == len(self.facts):  # every fact used: the rows keep their indices
            return {"files": dict(self.files), "facts": list(self.facts), "signatures": list(self.signatures)}
        remap = {old: new for new, old in enumerate(used)}
        files = {f: (*e[:4], tuple((*row[:5], remap[row[5]]) for row in e[4]), *e[5:]) for f, e in self.files.items()}
        return {"files": files, "facts": [self.facts[i] for i in used],
                "signatures": [self.signatures[i] for i in used]}

    def changed(self) -> bool:
        return self.read > 0 or set(self.files) != set(self.old.get("files", {}))

    def payload(self) -> tuple:
        """What a pool worker sends back: everything but the draws, which the parent rebuilds."""
        return self.files, self.facts, self.signatures, self.diagnostics, self.read, self.parsed, self.cached

    @classmethod
    def from_payload(cls, root: Path, chunk: ChunkInfo, config: WorldConfig, optional: frozenset[str],
                     payload: tuple) -> "ChunkScan":
        """The scan a worker did, with its draws rebuilt in the order the worker made them."""
        work = cls(root, chunk, config, optional, {})
        work.files, work.facts, work.signatures, work.diagnostics, work.read, work.parsed, work.cached = payload
        for file, entry in work.files.items():
            work.add_draws(file, entry[4], trusted=True)
        return work


_UNKNOWN = object()

