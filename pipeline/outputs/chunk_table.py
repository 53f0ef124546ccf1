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
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

import orjson

from pipeline.errors import PipelineError
from pipeline.fileio import read_regular

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
    try:  # read to its size (a buffered read of the cap would reserve the whole cap first)
        doc = orjson.loads(read_regular(path, limit=MAX_TABLE_BYTES))
    except (PipelineError, orjson.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != TABLE_FORMAT or doc.get("library") != checksum:
        return None
    try:
        return ChunkTable.read(doc, hashes)
    except ValueError:
        return None


class ChunkTable(Mapping):
    """chunk -> the set of its blob hashes (a frozenset, or the set a cook holds); entries read from a
    library are kept as its positions."""

    def __init__(self, hashes: Sequence[str] = (), positions: Mapping[str, list] | None = None,
                 sets: Mapping[str, frozenset[str]] | None = None):
        self._hashes = hashes  # what the positions index: the blob hashes of the library read, sorted
        self._sets: dict[str, frozenset[str]] = dict(sets or {})  # chunk -> its blob hashes (given)
        self._positions: dict[str, list] = {c: at for c, at in (positions or {}).items() if c not in self._sets}
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

    # -------------------------------------------------------------- the mapping
    def __getitem__(self, chunk: str) -> frozenset[str]:
        found = self._sets.get(chunk)
        if found is None:
            found = self._made.get(chunk)
            if found is None:
                hashes = self._hashes
                found = self._made[chunk] = frozenset([hashes[i] for i in self._positions[chunk]])
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
        for at in self._positions.values():
            used.update(at)
        return frozenset([hashes[i] for i in used]).union(*self._sets.values())

    def encoded(self, position: Mapping[str, int]) -> dict[str, list[int]]:
        """chunk -> the sorted positions of its blobs in a library whose blobs are at ``position``
        (hash -> position), by chunk name; KeyError (the chunk, the hash) when a chunk names a blob not there."""
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
            if same:
                out[chunk] = at
                continue
            mapped = [remap[i] for i in at]
            if mapped and min(mapped) < 0:
                raise KeyError(chunk, next(self._hashes[i] for i in at if remap[i] < 0))
            out[chunk] = mapped  # both libraries' blobs are sorted by hash: still in order
        return out
