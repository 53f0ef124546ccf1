"""The output folder's shader library on disk, kept so that it holds every blob any chunk index names.

A cook's output phase runs under one lock on the library (:func:`library_lock`):

1. the chunk indexes of the cook are built and staged (written to temp files, not yet in
   place; :class:`pipeline.outputs.atomic.Staged`), each naming blobs of this cook's jobs;
2. :meth:`Library.grow`: the library on disk becomes the union of what it held and the
   blobs of the staged indexes (skipped when it holds every one of them already);
3. the staged indexes are renamed into place, then the sweep and the level manifests;
4. :meth:`Library.settle`: the library becomes exactly the blobs the chunk indexes on disk
   name (skipped when it already is: an edit that only adds blobs writes the library once),
   and its chunk table names each index's blobs.

The chunk table is a file of its own beside the library (:mod:`pipeline.outputs.chunk_table`),
written by step 4 after the library it names; it names that library by its checksum, so from
step 2 (a new library) to step 4 there is no table a reader would take, and between steps 3
and 4 a table may name a chunk's previous blobs (its index names its own).  An edit that
changes which blobs a chunk uses but not the library's blobs rewrites the table only (a few
bytes a chunk), never the library (every blob of the game).

So at every instant, and after a ``kill -9`` at any point, the library on disk holds
every blob of every chunk index on disk; between steps 2 and 4 it may hold more.  Each
write is one atomic rename of the whole file (:func:`pipeline.outputs.atomic.write_if_changed`),
so a reader holding the old file keeps reading it.  A reader opens the library first and
reads a chunk index after; if the index names a blob that library lacks, a cook replaced
both meanwhile and the reader opens them again (:func:`pipeline.outputs.read_outputs.load_chunk`).

Settling needs each chunk index's blobs: those of this cook's chunks are known, the
others come from the library's chunk table while the index file's stamp is the one the
``library`` record saw when it last settled the library, and the library is the file it
settled; an index that changed since is read.  So a cook of one chunk reads no other
chunk index.

The record binds besides the chunk table file the settle left (its stamp) and how many chunks
name each of the library's blobs.  While the library and the table are those files, the table
is read as it is (no entry checked or decoded: :func:`pipeline.outputs.chunk_table.read_table`)
and the blobs the indexes name are those counts less the changed chunks' old entries plus
their new ones; else every entry is read, checked and counted, as when there is no record.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.cache.store import RecordKind, Store
from pipeline.outputs import atomic
from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_table import ChunkTable, dump_table, read_table, table_path
from pipeline.outputs.file_pieces import Held
from pipeline.outputs.index_walk import index_stamps
from pipeline.outputs.pak import PakError, PakReader, read_head
from pipeline.outputs.pak_write import pak_parts
from pipeline.compilers.reflect import SPIRV_MAGIC
from pipeline.outputs.reflection import ReflectionError, reflect_cached
from pipeline.stamps import stamp_of

_KEPT = object()  # a chunk whose entry in the table stays as the library holds it
# [library stamp, {index path: [stamp, chunk name or null]}] and, when the settle left the table file as
# dump_table writes it, {"table": its stamp, "users": [how many chunks name each blob, in library order]}
LIBRARY = RecordKind("library", 1)
SETTLED = RecordKind("library-settled", 1)  # the library stamp alone (read before every cook's lookup)


@contextlib.contextmanager
def library_lock(out: Path | str) -> Iterator[None]:
    """Exclusive hold of the output folder's library for one cook's output phase."""
    with atomic.locked(Path(out), purpose="library"):
        yield


@dataclass
class Library:
    """The library of ``out`` as this cook sees it, and what it wrote."""

    out: Path
    store: Store
    hashes: frozenset[str] = frozenset()
    intact: bool = False        # the file read as a library (header and index)
    found: str = "new"          # on disk: "new" (never written), "absent" (deleted), "damaged" or "intact"
    seen_at: list | None = None  # the library stamp the last settle recorded, when it is the file's now
    opened: tuple[list[str], str] | None = None  # the library read: its sorted hashes and its checksum
    checksum: str | None = None  # the checksum of the library on disk, as opened or as this cook wrote it
    table_found: bool = False   # the chunk table beside it was written for it (else: empty, its indexes read)
    table_new: bool = True      # no chunk table file was there
    _chunks: ChunkTable | None = None  # the table, read when first needed (settle, after the indexes are in place)
    verify: bool = False        # --verify: the table file is read and checked whole too, whatever its stamp
    _record: tuple[dict, dict] | None = None  # the last settle's record of this library (:meth:`_recorded`)
    _counted: object = None       # how many chunks name each blob, as recorded with the table file read
    _users: tuple | None = None   # (hashes, count of each, {other blob: count}): the users of the table settled
    _table_left: list | None = None  # the stamp of the table file while it is the table settled, as written
    written: bool = False
    table_written: bool = False
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, out: Path | str, store: Store, *, verify: bool = False) -> "Library":
        path = mf.library_path(out)
        found = read_head(path)
        settled = store.get(SETTLED, str(path.resolve()))  # the stamp alone: what the index files were is read
        recorded = isinstance(settled, (list, tuple))     # by settle, after the indexes are in place
        trusted = recorded and _same(settled, stamp_of(path))
        # a library whose stamp is not the one recorded (changed since by anything but a cook) is read whole
        table_new = not table_path(path).exists()
        if found is None or ((verify or (recorded and not trusted)) and not _intact(path)):
            state = "damaged" if path.exists() else "absent" if recorded else "new"
            return cls(Path(out), store, found=state, table_new=table_new)
        return cls(Path(out), store, frozenset(found[0]), intact=True, found="intact", verify=verify,
                   seen_at=settled if trusted else None, opened=found, checksum=found[1], table_new=table_new)

    @property
    def chunks(self) -> ChunkTable:
        """The chunk table: the one beside the library as the cook opened it (read on first use, still that
        library's when a grow has replaced the library since), then as this cook changed it."""
        if self._chunks is None:
            bound = {} if self.verify else self._recorded()[1]  # the table file the last settle left
            table, stamp, exact = (None, None, False) if self.opened is None else \
                read_table(self.table_path, *self.opened, trusted=bound.get("table"))
            self.table_found = table is not None
            self._chunks = table or ChunkTable()
            self._table_left = list(stamp) if exact else None
            if table is not None and _same(bound.get("table"), stamp):  # recorded with this very file
                self._counted = bound.get("users")
        return self._chunks

    @property
    def path(self) -> Path:
        return mf.library_path(self.out)

    @property
    def table_reason(self) -> str:
        """Why the chunk table was written (``--explain``)."""
        if self.table_new:
            return "new"
        if self.written:
            return f"{self.path.name} written"
        return "chunks' blobs changed" if self.table_found or self.found != "intact" \
            else f"missing, or written for another library: {self.table_path.name}"

    @property
    def table_path(self) -> Path:
        return table_path(self.path)

    @property
    def reason(self) -> str:
        """Why the library was written (``--explain``), from what was on disk when the cook opened it."""
        return {"new": "new", "absent": f"file missing: {self.path.name}",
                "damaged": f"modified on disk (not a library of this version, or its checksum fails): {self.path.name}",
                }.get(self.found, "blobs of the chunk indexes changed")

    def grow(self, cooked: Mapping[str, frozenset[str]]) -> None:
        """Step 2: the library holds the blobs of ``cooked`` (chunk -> blobs of its staged index) too, read
        from the store; when it holds every one already, nothing is written (an edit whose keys other
        chunks use too waits for no library write).  The chunk table is neither read nor written here:
        :meth:`settle` brings it up to date after the indexes are in place."""
        hashes = self.hashes.union(*cooked.values())
        if hashes != self.hashes or not self.intact:
            # the table is left to settle (it reads it then, as the library it names had it)
            self._write(hashes, ChunkTable(sets=dict(cooked)), with_table=False)

    def settle(self, cooked: Mapping[str, frozenset[str]], removed: Iterable[str] = ()) -> None:
        """Step 4: exactly the blobs of the chunk indexes on disk.  ``cooked``: chunk -> blobs of the
        indexes this cook wrote or checked; ``removed``: chunks whose outputs it removed."""
        table, changed = self._table(cooked, set(removed))
        hashes = self._blobs(table, changed)
        if hashes != self.hashes or not self.intact:
            self._write(hashes, table)
        elif changed or not self.table_found or self.written:  # written: the table names the old one
            self._write_table(table)
        stamp = stamp_of(self.path)
        users = self._users_held()
        bound = [] if self._table_left is None else \
            [{"table": self._table_left, **({"users": users} if users is not None else {})}]
        with self.store.batched():
            self.store.set(LIBRARY, str(self.path.resolve()), [stamp, self._seen, *bound])
            self.store.set(SETTLED, str(self.path.resolve()), stamp)

    # -------------------------------------------------------------- the chunk table
    def _table(self, cooked: Mapping[str, frozenset[str]], removed: set[str]) -> tuple[ChunkTable, set[str]]:
        """The chunk table of the indexes on disk, and the chunks whose entry differs from the one the
        library holds (added, changed or dropped)."""
        seen_before, old = self._recorded()[0], self.chunks
        self._seen: dict[str, list] = {}
        kept: set[str] = set()  # chunks whose entry stays the one the library holds (not made into hashes)
        given: dict[str, frozenset[str]] = {}
        cooked_at = {str(mf.chunk_manifest_path(self.out, chunk)): chunk for chunk in cooked}
        for key, stamp in index_stamps(self.out):
            before = seen_before.get(key)
            if key in cooked_at:
                chunk = cooked_at[key]
                blobs = cooked[chunk]
            elif before is not None and _same(before[0], stamp) and (before[1] is None or before[1] in old):
                chunk = before[1]
                blobs = _KEPT if chunk is not None else None
            else:
                chunk, blobs = _read_blobs(key)
            self._seen[key] = [stamp, chunk]
            if chunk is not None and chunk not in removed and blobs is not None:
                if blobs is _KEPT:
                    kept.add(chunk)
                    given.pop(chunk, None)
                else:
                    given[chunk] = blobs
                    kept.discard(chunk)
        changes = {c: b for c, b in given.items() if c not in old or old[c] != b}
        kept.update(c for c in given if c not in changes)  # the same blobs: the entry as the library holds it
        changed = set(changes)
        if len(kept) + sum(c in old for c in changes) < len(old):  # some chunk of the table is gone
            changed.update(c for c in old if c not in kept and c not in changes)
        return (old.updated(changes, keep=kept) if changed else old), changed

    def _blobs(self, table: ChunkTable, changed: set[str]) -> frozenset[str]:
        """The blobs ``table`` names, its users kept (:meth:`_users_held`): the recorded counts less the
        ``changed`` chunks' old entries plus their new ones, or when none fit, every entry counted."""
        old = self.chunks
        count, extra = table.recounted(self._counted, old, changed) or table.users()
        self._users = (table.hashes, count, extra)
        return frozenset(itertools.compress(table.hashes, count)).union(extra)

    def _users_held(self) -> list[int] | None:
        """How many chunks of the table on disk name each blob of the library on disk, in its order."""
        if self._users is None:
            return None
        hashes, count, extra = self._users
        if not extra and not self.written and self.opened is not None and hashes is self.opened[0]:
            return count  # the library opened, held as it was: its positions stay
        position = {h: i for i, h in enumerate(sorted(self.hashes))}
        held = [0] * len(position)
        try:
            for blob, n in itertools.chain(zip(itertools.compress(hashes, count), filter(None, count)),
                                           extra.items()):
                held[position[blob]] += n
        except KeyError:
            return None
        return held

    def _recorded(self) -> tuple[dict, dict]:
        """The last settle's record, when it settled this very library file: index path -> [stamp, chunk],
        and what it bound to the table file it left (``{"table": stamp, "users": counts}``, or nothing)."""
        if self._record is None:
            record = None if self.seen_at is None else self.store.get(LIBRARY, str(self.path.resolve()))
            if isinstance(record, list) and len(record) in (2, 3) and isinstance(record[1], dict) \
                    and _same(record[0], self.seen_at):
                self._record = (record[1], record[2] if len(record) == 3 and isinstance(record[2], dict) else {})
            else:
                self._record = ({}, {})
        return self._record

    # -------------------------------------------------------------- the file
    def _write(self, hashes: frozenset[str], table: ChunkTable, *, with_table: bool = True) -> None:
        old = self._reader()
        # other blobs than the old library's: its blobs are copied file to file into the new one
        source = None if old is None or hashes == frozenset(old) else self._source(old)
        try:
            self._write_from(old, source, hashes, table, with_table)
        finally:
            if source is not None:
                os.close(source)

    def _write_from(self, old: PakReader | None, source: int | None, hashes: frozenset[str], table: ChunkTable,
                    with_table: bool) -> None:
        blobs, reflection, texts, lost = {}, {}, {}, []
        for digest in sorted(hashes):
            if old is not None and digest in old:  # copied as held: the library was checked when opened
                if source is None:
                    blobs[digest], texts[digest] = old.stored(digest)
                else:
                    offset, size, texts[digest] = old.held(digest)
                    blobs[digest] = Held(source, offset, size)
                continue
            blob = self.store.get_blob(digest)
            if blob is None:
                lost.append(digest)
                continue
            blobs[digest] = blob
            reflection[digest] = self._reflection(digest, blob)
        if lost:
            gone = sorted(chunk for chunk, used in table.items() if used & set(lost))
            self.errors.append(f"{len(lost)} blob(s) of chunk(s) {', '.join(gone[:5])} are neither in the library "
                               "nor in the cache: cook those chunks again")
            table = ChunkTable(sets={chunk: used for chunk, used in table.items() if not used & set(lost)})
            self._users = None  # counted with the chunks dropped
        pak = pak_parts(blobs, reflection, texts=texts, trusted=texts)
        held = frozenset(blobs)
        del blobs, texts  # views into the old library's mapping: only the pieces hold them now
        if old is None:
            self.written |= atomic.write_if_changed(self.path, pak.joined())
        elif held == frozenset(old):  # the same blobs: the same bytes, unless the old file's layout differs
            data = pak.joined()
            if not old.same_bytes(data):
                self._replace(old, data)
        else:  # other blobs, so other bytes: streamed from the pieces, the old blobs copied from its file
            self._replace(old, pak.parts)
        self.hashes, self.intact, self.checksum = held, True, pak.checksum.hex()
        if with_table:
            self._write_table(table)

    def _write_table(self, table: ChunkTable) -> None:
        """The chunk table file for the library on disk (this cook holds its lock: the file it opened or wrote)."""
        self.table_written |= atomic.write_if_changed(self.table_path,
                                                      dump_table(table, sorted(self.hashes), self.checksum))
        self._chunks = table
        self._table_left = list(stamp_of(self.table_path) or ()) or None

    def _replace(self, old: PakReader, data) -> None:
        """Write the library (bytes, or the pieces of :func:`pipeline.outputs.pak_write.pak_parts`) to a temp file,
        let go of the old library's mapping, then put the temp in place."""
        staged = atomic.Staged()
        try:
            staged.write(self.path, data)
            if isinstance(data, list):
                data.clear()  # the pieces' views into the old mapping go with them
            old.close()  # before the rename: a mapped file cannot be replaced everywhere
            staged.publish()
        finally:
            staged.abandon()
        self.written = True

    def _source(self, old: PakReader) -> int | None:
        """The old library's file, open for its blobs to be copied from; None when the file at the path is no
        longer the one ``old`` mapped, or the system reads no file at an offset (its blobs are then copied from
        the mapping)."""
        if not hasattr(os, "pread"):
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        stat = os.fstat(fd)
        if old.identity != (stat.st_dev, stat.st_ino, stat.st_size):
            os.close(fd)
            return None
        return fd

    def _reader(self) -> PakReader | None:
        """The library on disk, mapped (a new library copies its blobs from its file, or from the mapping)."""
        if not self.intact:
            return None
        try:
            return PakReader(self.path)
        except (PakError, OSError):
            return None

    def _reflection(self, digest: str, blob: bytes) -> dict | None:
        if not blob.startswith(SPIRV_MAGIC):
            return None  # GLSL ES text: nothing to reflect
        try:
            return reflect_cached(self.store, digest, lambda d: blob)
        except ReflectionError as exc:
            self.warnings += [d.message for d in exc.diagnostics]
            return None


def held_blobs(out: Path | str, store: Store) -> frozenset[str]:
    """The blobs of ``out``'s library when it is the file a cook with this store last settled (its stamp
    the one recorded); else none.  Its header and index are read, no blob; the stamp comes from a
    record of its own, not from the ``library`` record (which names every chunk index)."""
    path = mf.library_path(out)
    if not _same(store.get(SETTLED, str(path.resolve())), stamp_of(path)):
        return frozenset()
    found = read_head(path)
    return frozenset(found[0]) if found is not None else frozenset()


def settle_folder(out: Path | str, store: Store) -> None:
    """Drop from ``out``'s library the blobs no chunk index names any more (after ``pipeline clean``)."""
    if mf.library_path(out).exists():
        with library_lock(out):
            Library.open(out, store).settle({})


def _read_blobs(path: str) -> tuple[str | None, frozenset[str] | None]:
    try:
        manifest = mf.load_chunk_manifest(path)
    except mf.ManifestError:
        return None, None  # not a chunk index of this format: not the library's business
    return manifest.chunk, mf.stage_hashes(manifest)


def _same(recorded, now) -> bool:
    return now is not None and isinstance(recorded, (list, tuple)) and list(recorded) == list(now)


def _intact(path: Path) -> bool:
    try:
        PakReader(path).verify()
    except PakError:
        return False
    return True

