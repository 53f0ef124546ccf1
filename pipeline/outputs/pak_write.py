"""Writing a shader library (the layout of :mod:`pipeline.outputs.pak`): its bytes, or the pieces they
are made of for a writer that streams the file (:func:`pak_parts`), its blobs copied from an old library
file rather than read (:class:`~pipeline.outputs.file_pieces.Held`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import orjson

from pipeline.digest import bytes_hash
from pipeline.outputs.file_pieces import Held
from pipeline.outputs.pak import ALIGNMENT, CHECKSUM_AT, ENTRY, FORMAT_VERSION, HEADER, MAGIC, ZERO_DIGEST


def blobs_by_hash(blobs: Iterable[bytes]) -> dict[str, bytes]:
    """Key blobs by their SHA-256 hex digest; identical blobs collapse to one."""
    return {bytes_hash(blob): bytes(blob) for blob in blobs}


def dump_reflection(doc: Mapping | None) -> bytes:
    """A blob's reflection as the library stores it: compact JSON with sorted keys (empty: none)."""
    return b"" if doc is None else orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


class PakParts(NamedTuple):
    """A library's bytes as the pieces they are made of, in file order (header, index, padding, blobs and
    reflections), and the checksum its header holds: what :func:`pak_parts` gives a writer that streams
    the file (the blobs of an old library stay views into it or extents of its file, never copied into
    one buffer)."""

    parts: list
    size: int
    checksum: bytes

    def joined(self) -> bytes:
        return b"".join(piece.read() if isinstance(piece, Held) else piece for piece in self.parts)


def write_pak(blobs: Mapping[str, bytes], reflection: Mapping[str, Mapping | None] | None = None, *,
              texts: Mapping[str, bytes] | None = None, trusted: Iterable[str] = ()) -> bytes:
    """Pack ``{sha256 hex: blob}`` with each blob's reflection (``{sha256 hex: document or None}``) into
    library bytes, deterministic for equal content (:func:`pak_parts`, joined)."""
    return pak_parts(blobs, reflection, texts=texts, trusted=trusted).joined()


def pak_parts(blobs: Mapping[str, bytes], reflection: Mapping[str, Mapping | None] | None = None, *,
              texts: Mapping[str, bytes] | None = None, trusted: Iterable[str] = ()) -> PakParts:
    """The library of ``{sha256 hex: blob}`` with each blob's reflection (``{sha256 hex: document or None}``),
    as its pieces in file order.
    ``texts``: reflections already as the library stores them (:func:`dump_reflection`), by blob, taken
    before ``reflection``; ``trusted``: blobs known to be keyed by their hash (read from an intact
    library), not hashed again.

    Blobs and texts may be any bytes-like objects (views into another library, say), and trusted blobs
    :class:`~pipeline.outputs.file_pieces.Held` extents of another library's file: they are pieces of the
    result as they are.  The checksum hashes every piece but the blobs (as
    :func:`pipeline.outputs.pak._checksum` does the file's bytes), so no blob is read to make it.

    Raises ValueError when a key is not the SHA-256 of its blob.
    """
    reflection, texts, trusted = reflection or {}, texts or {}, frozenset(trusted)
    entries = sorted(((bytes.fromhex(key) if key in trusted else _digest_of(key, blob), blob)
                      for key, blob in blobs.items()), key=lambda entry: entry[0])
    stored = [texts[key] if (key := digest.hex()) in texts else dump_reflection(reflection.get(key))
              for digest, _ in entries]
    count = len(entries)
    index_end = HEADER.size + ENTRY.size * count
    pieces = [blob for _, blob in entries] + stored
    offsets, size = _layout([len(piece) for piece in pieces], index_end)
    index = bytearray(ENTRY.size * count)
    for i, (digest, blob) in enumerate(entries):
        ENTRY.pack_into(index, ENTRY.size * i, digest, offsets[i], len(blob), offsets[count + i], len(stored[i]))
    head = bytearray(HEADER.size)
    HEADER.pack_into(head, 0, MAGIC, FORMAT_VERSION, count, ALIGNMENT, 0, size, ZERO_DIGEST, 0, 0)
    parts, h, cursor = [head, index], hashlib.sha256(head), index_end
    h.update(index)
    for i, (at, piece) in enumerate(zip(offsets, pieces)):
        if at > cursor:
            parts.append(bytes(at - cursor))
            h.update(parts[-1])
        parts.append(piece)
        if i >= count:  # a reflection: the blobs are covered by their hashes in the index
            h.update(piece)
        cursor = at + len(piece)
    if size > cursor:
        parts.append(bytes(size - cursor))
        h.update(parts[-1])
    checksum = h.digest()
    head[CHECKSUM_AT:CHECKSUM_AT + 32] = checksum
    return PakParts(parts, size, checksum)


def _digest_of(key: str, blob: bytes) -> bytes:
    digest = hashlib.sha256(blob).digest()
    if key != digest.hex():
        raise ValueError(f"library key {key[:16]}... is not the SHA-256 of its blob")
    return digest


def _layout(sizes: list[int], start: int) -> tuple[list[int], int]:
    offsets, cursor = [], _align(start)
    for size in sizes:
        offsets.append(cursor)
        cursor = _align(cursor + size)
    return offsets, cursor


def _align(value: int) -> int:
    return (value + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
