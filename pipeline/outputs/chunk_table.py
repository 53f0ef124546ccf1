"""A shader library's chunk table: chunk -> the blob hashes its index names, read on demand.

The table of a large world's library names a few hundred blobs for each of thousands of
chunks.  Read from a library (:func:`pipeline.outputs.pak.read_index`), a chunk's entry stays
the positions the file gives (into the library's sorted blob hashes) and is made into hashes
only when asked for; a table made from another (:meth:`ChunkTable.updated`) shares the entries it
does not change, and a write maps them to the new library's positions (:meth:`ChunkTable.encoded`).
So a cook of one chunk neither decodes nor encodes the table entries of the others.

The table is a file of its own beside the library (``shaders.chunks`` beside ``shaders.pak``:
:func:`table_path`), compact JSON with sorted keys::

    {"chunks": {"forest/c00": [0, 3, 7], ...}, "format": 1, "library": "<the library's checksum, hex>"}

Positions index the library's blobs in its index order.  The ``library`` field binds the
table to the one library it was written for: a table beside another library (a cook killed
between the two renames, a library copied alone) is not read, and the cook reads the chunk
indexes instead.  Which blobs a chunk uses changes with most edits, the set of blobs in the
library with few: kept apart, such an edit rewrites this file and not the library.

A settle reads the file it left itself (its stamp the one the settle recorded: :func:`read_table`)
without checking or decoding an entry: each stays its bytes until asked for, and is written back
as those bytes while the library's blobs do not move.  It counts the blobs' users from the
counts it recorded and the entries that changed (:meth:`ChunkTable.recounted`), not from every entry.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

import msgspec
import orjson

from pipeline.fileio import open_regular
from pipeline.stamps import Stamp, of_stat

TABLE_SUFFIX = ".chunks"
TABLE_FORMAT = 1
MAX_TABLE_BYTES = 1 << 30


def table_path(library: Path) -> Path:
    """Where the chunk table of the library at ``library`` lives (``shaders.pak`` -> ``shaders.chunks``)."""
    return library.with_suffix(TABLE_SUFFIX)


def dump_table(table: "ChunkTable", hashes: Sequence[str], checksum: str) -> bytes:
    """The table file for the library whose sorted blob hashes are ``hashes`` and checksum ``checksum``;
    KeyError (the chunk, the hash) when a chunk names a blob the library lacks."""
    position = {h: i for i, h in enumerate(hashes)}
    return orjson.dumps({"chunks": table.encoded(position), "format": TABLE_FORMAT, "library": checksum},
                        option=orjson.OPT_SORT_KEYS)


def load_table(path: Path, hashes: Sequence[str], checksum: str) -> "ChunkTable | None":
    """The table at ``path`` for the library of ``hashes`` (sorted) and ``checksum``; None when the file is
    missing, unreadable or malformed, or was written for another library."""
    found = _read(path)
    return None if found is None else _parse(found[0], hashes, checksum)


def read_table(path: Path, hashes: Sequence[str], checksum: str,
               trusted: object = None) -> "tuple[ChunkTable | None, Stamp | None, bool]":
    """What :func:`load_table` gives, the stamp of the file read (None: none), and whether the file is exactly
    what :func:`dump_table` writes for that table.  When its stamp is ``trusted`` (a settle's record of the
    file it left), its entries are taken as they are: neither checked nor decoded until asked for."""
    found = _read(path)
    if found is None:
        return None, None, False
    data, stamp = found
    if isinstance(trusted, list) and trusted == list(stamp):
        try:
            doc = _TRUSTED.decode(data)
        except msgspec.DecodeError:
            doc = None
        if doc is not None and doc.format == TABLE_FORMAT and doc.library == checksum:
            return ChunkTable(hashes, doc.chunks), stamp, True
    table = _parse(data, hashes, checksum)
    return table, stamp, table is not None and dump_table(table, hashes, checksum) == data


class _Trusted(msgspec.Struct):
    """A table file as :func:`dump_table` wrote it: each chunk's entry left as its bytes."""

    chunks: dict[str, msgspec.Raw]
    format: int
    library: str


_TRUSTED = msgspec.json.Decoder(_Trusted)
_ENTRY = msgspec.json.Decoder(list[int])


def _read(path: Path) -> tuple[bytes, Stamp] | None:
    """The bytes of the regular file ``path`` and its stamp after they were read; None when it is missing,
    unreadable, not a regular file or over :data:`MAX_TABLE_BYTES`."""
    try:
        with open_regular(path) as file:
            if os.fstat(file.fileno()).st_size > MAX_TABLE_BYTES:
                return None
            data = file.read()  # to its size (a buffered read of the cap would reserve the whole cap first)
            stamp = of_stat(os.fstat(file.fileno()))  # after: a write meanwhile is another stamp
    except (OSError, ValueError):
        return None
    return (data, stamp) if len(data) <= MAX_TABLE_BYTES else None


def _parse(data: bytes, hashes: Sequence[str], checksum: str) -> "ChunkTable | None":
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or doc.get("format") != TABLE_FORMAT or doc.get("library") != checksum:
        return None
    try:
        return ChunkTable.read(doc, hashes)
    except ValueError:
        return None


class ChunkTable(Mapping):
    """chunk -> the set of its blob hashes (a frozenset, or the set a cook holds); entries read from a
    library are kept as its positions (a list, or the entry's JSON bytes from a trusted file)."""

    def __init__(self, hashes: Sequence[str] = (), positions: Mapping[str, list | msgspec.Raw] | None = None,
                 sets: Mapping[str, frozenset[str]] | None = None):
        self._hashes = hashes  # what the positions index: the blob hashes of the library read, sorted
        self._sets: dict[str, frozenset[str]] = dict(sets or {})  # chunk -> its blob hashes (given)
        self._positions: dict[str, list | msgspec.Raw] = {c: at for c, at in (positions or {}).items()
                                                           if c not in self._sets}
        self._made: dict[str, frozenset[str]] = {}  # positions made into hashes, when asked for

    @classmethod
    def read(cls, doc: object, hashes: Sequence[str]) -> "ChunkTable":
        """The table of a library's ``{"chunks": {chunk: [position, ...]}}``; ValueError when it is not
        one, or a position is not one of ``hashes`` (checked here, not when an entry is asked for)."""
        chunks = doc.get("chunks") if isinstance(doc, dict) else None
        if not isinstance(chunks, dict):
            raise ValueError("the chunk table is not an object of chunks")
        for at in chunks.values():  # positions of the library's blobs, ascending, each once
            if not isinstance(at, list) or not set(map(type, at)) <= {int} \
                    or not all(map(operator.lt, at, itertools.islice(at, 1, None))) \
                    or (at and (at[0] < 0 or at[-1] >= len(hashes))):
                raise ValueError("a chunk's entry is not a list of blob positions")
        return cls(hashes, chunks)

    @property
    def hashes(self) -> Sequence[str]:
        """The blob hashes (sorted) the positions index: those of the library the table was read for."""
        return self._hashes

    def positions(self, chunk: str) -> list[int] | None:
        """The positions of ``chunk``'s blobs (an entry of a trusted file is decoded here, each time it is
        asked for); None when the chunk has no entry of positions (none, or its hashes given)."""
        at = self._positions.get(chunk)
        return at if at is None or type(at) is list else _ENTRY.decode(at)

    # -------------------------------------------------------------- the mapping
    def __getitem__(self, chunk: str) -> frozenset[str]:
        found = self._sets.get(chunk)
        if found is None:
            found = self._made.get(chunk)
            if found is None:
                at = self.positions(chunk)
                if at is None:
                    raise KeyError(chunk)
                hashes = self._hashes
                found = self._made[chunk] = frozenset([hashes[i] for i in at])
        return found

    def __iter__(self) -> Iterator[str]:  # a chunk is in one of the two (the constructor sees to it)
        yield from self._positions
        yield from self._sets

    def __len__(self) -> int:
        return len(self._positions) + len(self._sets)

    def __contains__(self, chunk: object) -> bool:
        return chunk in self._sets or chunk in self._positions

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(self) != len(other) or any(chunk not in other for chunk in self):
            return False
        mine = other if isinstance(other, ChunkTable) else None
        for chunk in self:
            if mine is not None and self._hashes is mine._hashes \
                    and self._positions.get(chunk, self) is mine._positions.get(chunk, mine):
                continue  # the same entry of the same library read
            if self[chunk] != other[chunk]:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChunkTable({dict(self)!r})"

    # -------------------------------------------------------------- tables made from it
    def updated(self, changes: Mapping[str, frozenset[str]], keep: Iterable[str] | None = None) -> "ChunkTable":
        """This table with ``changes`` (chunk -> its blobs) in place; ``keep``: the chunks of this table
        kept besides (None: every one).  Unchanged entries are shared, not made into hashes."""
        kept = set(self) if keep is None else set(keep) & set(self)
        positions = {c: at for c, at in self._positions.items() if c in kept and c not in changes}
        sets = {c: s for c, s in self._sets.items() if c in kept and c not in changes}
        table = ChunkTable(self._hashes, positions, {**sets, **{c: b if isinstance(b, AbstractSet) else frozenset(b)
                                                                  for c, b in changes.items()}})
        table._made = {c: s for c, s in self._made.items() if c in positions}
        return table

    def blobs(self) -> frozenset[str]:
        """Every blob some chunk names."""
        hashes, used = self._hashes, set()
        for chunk in self._positions:
            used.update(self.positions(chunk))
        return frozenset([hashes[i] for i in used]).union(*self._sets.values())

    def users(self) -> tuple[list[int], dict[str, int]]:
        """How many chunks name each blob: a count for each of :attr:`hashes`, and the blobs besides with
        theirs.  Every entry is decoded: :meth:`recounted` counts from the counts of another table."""
        count: list[int] = [0] * len(self._hashes)
        for chunk in self._positions:
            for i in self.positions(chunk):
                count[i] += 1
        extra: dict[str, int] = {}
        for blobs in self._sets.values():
            self._count(blobs, count, extra, 1)
        return count, extra

    def recounted(self, users: object, old: "ChunkTable",
                  changed: Iterable[str]) -> tuple[list[int], dict[str, int]] | None:
        """:meth:`users` of this table from ``users`` (``old``'s count for each of its :attr:`hashes`, as a
        settle recorded it) and the entries of the chunks ``changed`` from ``old`` (added, changed or
        dropped) alone; None when ``users`` does not fit (not a count for each, or one falls below zero)."""
        hashes = self._hashes
        if old._hashes is not hashes or not isinstance(users, list) or len(users) != len(hashes) \
                or not set(map(type, users)) <= {int} or (users and min(users) < 0):
            return None
        count, extra, changed = list(users), {}, list(changed)
        for table, step in ((old, -1), (self, 1)):
            for chunk in changed:
                at = table.positions(chunk)
                if at is None:
                    table._count(table._sets.get(chunk, ()), count, extra, step)
                elif at and (at[0] < 0 or at[-1] >= len(count)):
                    return None
                else:
                    for i in at:
                        count[i] += step
            if step < 0 and ((count and min(count) < 0) or extra):  # more users taken than counted
                return None
        return count, extra

    def _count(self, blobs: Iterable[str], count: list[int], extra: dict[str, int], step: int) -> None:
        hashes = self._hashes
        for blob in blobs:
            i = bisect.bisect_left(hashes, blob)
            if i < len(hashes) and hashes[i] == blob:
                count[i] += step
            else:
                extra[blob] = extra.get(blob, 0) + step

    def encoded(self, position: Mapping[str, int]) -> dict[str, list[int] | orjson.Fragment]:
        """chunk -> the sorted positions of its blobs in a library whose blobs are at ``position``
        (hash -> position), by chunk name (an entry of a trusted file whose positions stay: its bytes);
        KeyError (the chunk, the hash) when a chunk names a blob not there.

        When positions move (the library gained or lost blobs), each entry is mapped in C
        (:func:`operator.itemgetter` over the old position -> new position list), and only
        entries naming a blob the new library lacks are looked at one position at a time."""
        remap = None
        out = {}
        for chunk in sorted(self):
            at = self._positions.get(chunk)
            if at is None:
                try:
                    out[chunk] = sorted({position[h] for h in self[chunk]})
                except KeyError as exc:
                    raise KeyError(chunk, exc.args[0]) from None
                continue
            if remap is None:  # the old positions -> the new ones: the same blobs give the same lists
                remap = [position.get(h, -1) for h in self._hashes]
                same = remap == list(range(len(remap)))
                gone = frozenset(i for i, to in enumerate(remap) if to < 0)  # blobs the new library lacks
            if same:
                out[chunk] = at if type(at) is list else orjson.Fragment(bytes(at))
                continue
            at = self.positions(chunk)
            if gone and not gone.isdisjoint(at):
                raise KeyError(chunk, next(self._hashes[i] for i in at if i in gone))
            # both libraries' blobs are sorted by hash: the mapped positions are still in order
            out[chunk] = list(operator.itemgetter(*at)(remap)) if len(at) > 1 else [remap[i] for i in at]
        return out
