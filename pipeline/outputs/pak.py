"""The ``.pak`` archive: one chunk's SPIR-V blobs, deduplicated and addressed by hash.

Byte layout (all integers little-endian; full description in docs/formats.md)::

    offset  size  field
    0       8     magic            b"\\x89PPAK\\r\\n\\x1a"
    8       4     u32 version      FORMAT_VERSION (1)
    12      4     u32 count        number of blobs (index entries)
    16      4     u32 alignment    every blob starts at a multiple of this (8)
    20      4     u32 reserved     0
    24      8     u64 file_size    total size of the file in bytes
    32      32    checksum         SHA-256 of the whole file with these 32 bytes zeroed
    64      48*n  index            n entries, sorted by blob hash (bytewise ascending):
                                     32 bytes  SHA-256 of the blob (raw digest)
                                     u64       offset of the blob from the file start
                                     u64       size of the blob in bytes
    ...           blobs            in index order, each at an aligned offset,
                                   zero padding in between and up to file_size

Each blob appears once (the index is keyed by its content hash), so the same bytes
always produce the same file.  A reader refuses a newer version with
:class:`PakVersionError` and any structural or checksum problem with
:class:`PakCorruptError`; both are :class:`PakError`, a located user error.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from pipeline.digest import bytes_hash
from pipeline.errors import PipelineError
from pipeline.fileio import open_regular, read_regular

MAGIC = b"\x89PPAK\r\n\x1a"
FORMAT_VERSION = 1
ALIGNMENT = 8
HEADER = struct.Struct("<8sIIIIQ32s")
ENTRY = struct.Struct("<32sQQ")
_CHECKSUM_AT = 32
_ZERO_DIGEST = bytes(32)
MAX_PAK_BYTES = 1 << 34


class PakError(PipelineError):
    """A .pak file cannot be used."""


class PakVersionError(PakError):
    """The .pak file was written by a newer (or unknown) format version."""


class PakCorruptError(PakError):
    """The .pak file is truncated, has a bad magic, a bad index or a bad checksum."""


# ------------------------------------------------------------------ writing
def blobs_by_hash(blobs: Iterable[bytes]) -> dict[str, bytes]:
    """Key blobs by their SHA-256 hex digest; identical blobs collapse to one."""
    return {bytes_hash(blob): bytes(blob) for blob in blobs}


def write_pak(blobs: Mapping[str, bytes]) -> bytes:
    """Pack ``{sha256 hex: blob}`` into .pak bytes (deterministic for equal content).

    Raises ValueError when a key is not the SHA-256 of its blob.
    """
    entries = sorted((_digest_of(key, blob), bytes(blob)) for key, blob in blobs.items())
    index_end = HEADER.size + ENTRY.size * len(entries)
    offsets, size = _layout([len(blob) for _, blob in entries], index_end)
    out = bytearray(size)
    for i, ((digest, blob), offset) in enumerate(zip(entries, offsets)):
        ENTRY.pack_into(out, HEADER.size + ENTRY.size * i, digest, offset, len(blob))
        out[offset:offset + len(blob)] = blob
    HEADER.pack_into(out, 0, MAGIC, FORMAT_VERSION, len(entries), ALIGNMENT, 0, size, _ZERO_DIGEST)
    out[_CHECKSUM_AT:_CHECKSUM_AT + 32] = _checksum(out)
    return bytes(out)


def _digest_of(key: str, blob: bytes) -> bytes:
    digest = hashlib.sha256(blob).digest()
    if key != digest.hex():
        raise ValueError(f"pak key {key[:16]}... is not the SHA-256 of its blob")
    return digest


def _layout(sizes: list[int], start: int) -> tuple[list[int], int]:
    offsets, cursor = [], _align(start)
    for size in sizes:
        offsets.append(cursor)
        cursor = _align(cursor + size)
    return offsets, cursor


def _align(value: int) -> int:
    return (value + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _checksum(data: bytes | bytearray) -> bytes:
    h = hashlib.sha256()
    h.update(memoryview(data)[:_CHECKSUM_AT])
    h.update(_ZERO_DIGEST)
    h.update(memoryview(data)[_CHECKSUM_AT + 32:])
    return h.digest()


# ------------------------------------------------------------------ reading
class PakReader:
    """Read a .pak from a path or from bytes.

    Opening checks the header and the index (magic, version, sizes, order, bounds);
    :meth:`get` checks the hash of the blob it returns; :meth:`verify` checks the
    whole-file checksum and every blob.
    """

    def __init__(self, source: Path | str | bytes | bytearray | memoryview):
        if isinstance(source, (bytes, bytearray, memoryview)):
            self.name, self._data = "<bytes>", bytes(source)
        else:
            self.name, self._data = str(source), _read_file(Path(source))
        self.version, self.alignment, count = self._check_header()
        self._index = self._read_index(count)

    # -------------------------------------------------------------- API
    def hashes(self) -> list[str]:
        """The blob hashes (SHA-256 hex), sorted."""
        return list(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, digest: object) -> bool:
        return digest in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def get(self, digest: str) -> bytes:
        """The blob with this SHA-256 hex digest; KeyError when absent."""
        offset, size = self._index[digest]
        blob = self._data[offset:offset + size]
        if bytes_hash(blob) != digest:
            raise self._corrupt(f"blob {digest[:12]} does not match its hash")
        return blob

    def items(self) -> Iterator[tuple[str, bytes]]:
        for digest in self._index:
            yield digest, self.get(digest)

    def verify(self) -> None:
        """Check the file checksum and every blob hash; raises PakCorruptError."""
        stored = self._data[_CHECKSUM_AT:_CHECKSUM_AT + 32]
        if _checksum(self._data) != stored:
            raise self._corrupt("checksum mismatch")
        for digest in self._index:
            self.get(digest)

    # -------------------------------------------------------------- parsing
    def _check_header(self) -> tuple[int, int, int]:
        if not self._data.startswith(MAGIC):
            raise self._corrupt("not a .pak file (bad magic)")
        if len(self._data) < HEADER.size:
            raise self._corrupt("truncated header")
        _, version, count, alignment, _, size, _ = HEADER.unpack_from(self._data)
        if version != FORMAT_VERSION:
            raise PakVersionError.at(self.name, f".pak format version {version} is not supported "
                                     f"(this reader knows version {FORMAT_VERSION}); rebuild the outputs")
        if size != len(self._data):
            raise self._corrupt(f"file is {len(self._data)} bytes, header says {size} (truncated?)")
        if alignment not in (4, 8) or HEADER.size + ENTRY.size * count > size:
            raise self._corrupt("bad header (alignment or entry count)")
        return version, alignment, count

    def _read_index(self, count: int) -> dict[str, tuple[int, int]]:
        index: dict[str, tuple[int, int]] = {}
        previous, data_end = b"", HEADER.size + ENTRY.size * count
        for i in range(count):
            digest, offset, size = ENTRY.unpack_from(self._data, HEADER.size + ENTRY.size * i)
            if digest <= previous:
                raise self._corrupt(f"index entry {i} is out of order or duplicated")
            if offset < data_end or offset % self.alignment or offset + size > len(self._data):
                raise self._corrupt(f"index entry {i} points outside the blob area")
            index[digest.hex()] = (offset, size)
            previous, data_end = digest, offset + size
        return index

    def _corrupt(self, message: str) -> PakCorruptError:
        return PakCorruptError.at(self.name, f"corrupt .pak: {message}")


def read_index(path: Path | str) -> frozenset[str] | None:
    """The blob hashes a .pak file's index names, reading only its header and index.

    None when the file is missing, unreadable, of another version, or when its
    header or index is malformed or its size is not the one the header records
    (truncated or grown).  Blob bytes are not read, so neither the checksum nor the
    blob hashes are checked: :meth:`PakReader.verify` does that.
    """
    try:
        with open_regular(path) as f:
            actual = os.fstat(f.fileno()).st_size
            head = f.read(HEADER.size)
            if len(head) < HEADER.size:
                return None
            magic, version, count, alignment, _, size, _ = HEADER.unpack(head)
            if magic != MAGIC or version != FORMAT_VERSION or size != actual or alignment not in (4, 8):
                return None
            if HEADER.size + ENTRY.size * count > size:
                return None
            index = f.read(ENTRY.size * count)
    except OSError:
        return None
    if len(index) != ENTRY.size * count:
        return None
    hashes, previous, data_end = [], b"", HEADER.size + ENTRY.size * count
    for digest, offset, blob_size in ENTRY.iter_unpack(index):
        if digest <= previous or offset < data_end or offset % alignment or offset + blob_size > size:
            return None
        hashes.append(digest.hex())
        previous, data_end = digest, offset + blob_size
    return frozenset(hashes)


def pak_intact(path: Path | str) -> bool:
    """True when the .pak at ``path`` reads as one and its bytes match its own checksum and its
    blobs their hashes (every byte read: :meth:`PakReader.verify`); False when missing or not."""
    try:
        PakReader(path).verify()
    except PakError:
        return False
    return True


def _read_file(path: Path) -> bytes:
    return read_regular(path, str(path), limit=MAX_PAK_BYTES, error=PakError, what=".pak")
