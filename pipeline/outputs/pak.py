"""The shader library ``<out>/shaders.pak``: every blob of an output folder once, with its reflection.

Byte layout (all integers little-endian; full description in docs/formats.md)::

    offset  size  field
    0       8     magic            b"\\x89PPAK\\r\\n\\x1a"
    8       4     u32 version      FORMAT_VERSION (3; version 2 held the chunk table, 1 was a per-chunk pak)
    12      4     u32 count        number of blobs (index entries)
    16      4     u32 alignment    every blob starts at a multiple of this (8)
    20      4     u32 reserved     0
    24      8     u64 file_size    total size of the file in bytes
    32      32    checksum         SHA-256 of the file but its blobs' bytes, these 32 bytes zeroed
    64      16    reserved         0
    80      64*n  index            n entries, sorted by blob hash (bytewise ascending):
                                     32 bytes  SHA-256 of the blob (raw digest)
                                     u64       offset of the blob from the file start
                                     u64       size of the blob in bytes
                                     u64       offset of the blob's reflection (compact JSON)
                                     u64       size of the reflection (0: none, not a Vulkan blob)
    ...           blobs            in index order, each at an aligned offset
    ...           reflections      in index order, each at an aligned offset
                                   zero padding in between and up to file_size

Each blob appears once (the index is keyed by its content hash), so the same blobs and
reflections always produce the same file.  A reader refuses another version with
:class:`PakVersionError` and any structural or checksum problem with
:class:`PakCorruptError`; both are :class:`PakError`, a located user error.

Which blobs each chunk index of the folder uses is the library's chunk table, a small
file beside it (:mod:`pipeline.outputs.chunk_table`, ``shaders.chunks``) bound to this
file's checksum: an edit that changes which blobs a chunk uses, but not the set of
blobs, rewrites the table and not the library.
"""

from __future__ import annotations

import functools
import hashlib
import mmap
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import orjson

from pipeline.digest import bytes_hash
from pipeline.errors import PipelineError
from pipeline.outputs.chunk_table import ChunkTable, load_table, table_path
from pipeline.fileio import open_regular

MAGIC = b"\x89PPAK\r\n\x1a"
FORMAT_VERSION = 3
ALIGNMENT = 8
HEADER = struct.Struct("<8sIIIIQ32sQQ")
ENTRY = struct.Struct("<32sQQQQ")
CHECKSUM_AT = 32
ZERO_DIGEST = bytes(32)
MAX_PAK_BYTES = 1 << 34
LIBRARY_NAME = "shaders.pak"


class PakError(PipelineError):
    """A shader library cannot be read."""


class PakVersionError(PakError):
    """A shader library of another format version than this reader knows."""


class PakCorruptError(PakError):
    """A shader library whose bytes do not hold together."""


# ------------------------------------------------------------------ the checksum
def recorded_checksum(data: bytes | bytearray) -> str:
    """The checksum (hex) a library's header holds: what its chunk table names it by."""
    return bytes(data[CHECKSUM_AT:CHECKSUM_AT + 32]).hex()


def _checksum(data: bytes | bytearray) -> bytes:
    """SHA-256 of the file's bytes but its blobs' (each of which the index names by its own SHA-256, which
    this covers), with the checksum field zeroed: a library written again with one blob more hashes its
    header, index, padding and reflections, not every blob's bytes again."""
    view, count = memoryview(data), struct.unpack_from("<I", data, 12)[0] if len(data) >= 16 else 0
    count = max(0, min(count, (len(data) - HEADER.size) // ENTRY.size))  # a damaged header: what fits
    extents = sorted((offset, offset + size) for _, offset, size, _, _ in
                     ENTRY.iter_unpack(view[HEADER.size:HEADER.size + ENTRY.size * count]))
    h = hashlib.sha256()
    h.update(view[:CHECKSUM_AT])
    h.update(ZERO_DIGEST)
    cursor = CHECKSUM_AT + 32
    for start, end in extents:
        if start > cursor:
            h.update(view[cursor:start])
        cursor = max(cursor, end)
    h.update(view[cursor:])
    return h.digest()


# ------------------------------------------------------------------ reading
Entry = tuple[int, int, int, int]  # blob offset, blob size, reflection offset, reflection size


class PakReader:
    """Read a shader library from a path or from bytes.

    Opening checks the header, the index (magic, version, sizes, order, bounds) and the
    chunk table; :meth:`get` checks the hash of the blob it returns; :meth:`verify`
    checks the whole-file checksum and every blob.
    """

    def __init__(self, source: Path | str | bytes | bytearray | memoryview):
        self.identity: tuple[int, int, int] | None = None  # the file mapped: (device, inode, size)
        if isinstance(source, (bytes, bytearray, memoryview)):
            self.name, self._data = "<bytes>", bytes(source)
        else:  # memory-mapped: a chunk's load reads the pages of its own blobs, not the whole library
            self.name, (self._data, self.identity) = str(source), _map_file(Path(source))
        self._path = None if self.name == "<bytes>" else Path(source)
        self.version, self.alignment, count = _check_header(self._data, len(self._data), self._corrupt, self.name)
        self._index = _parse_index(self._data[HEADER.size:HEADER.size + ENTRY.size * count], count,
                                   len(self._data), self.alignment, self._corrupt)

    @property
    def checksum(self) -> str:
        """The library's own checksum (hex), which its chunk table names."""
        return recorded_checksum(self._data[:HEADER.size])

    @functools.cached_property
    def chunks(self) -> ChunkTable:
        """The chunk table beside the library file: chunk -> the blobs its index names; empty when there is
        none, or it was written for another library (read on first use: a loader needs only blobs)."""
        if self._path is None:
            return ChunkTable()
        return load_table(table_path(self._path), list(self._index), self.checksum) or ChunkTable()

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
        offset, size, _, _ = self._index[digest]
        blob = self._data[offset:offset + size]
        if bytes_hash(blob) != digest:
            raise self._corrupt(f"blob {digest[:12]} does not match its hash")
        return blob

    def reflection(self, digest: str) -> dict | None:
        """The blob's reflection document (docs/formats.md), None for a blob without one; KeyError when absent."""
        _, _, offset, size = self._index[digest]
        if not size:
            return None
        try:
            doc = orjson.loads(self._data[offset:offset + size])
        except orjson.JSONDecodeError:
            raise self._corrupt(f"reflection of blob {digest[:12]} is not JSON") from None
        if not isinstance(doc, dict):
            raise self._corrupt(f"reflection of blob {digest[:12]} is not an object")
        return doc

    def stored(self, digest: str) -> tuple[memoryview, memoryview]:
        """Views of the blob and its reflection's text as this library holds them, unchecked: for a writer
        copying an intact library (opened after its checksum or its recorded stamp vouched for it)."""
        offset, size, text_at, text_size = self._index[digest]
        view = memoryview(self._data)
        return view[offset:offset + size], view[text_at:text_at + text_size]

    def held(self, digest: str) -> tuple[int, int, memoryview]:
        """Where the blob is in this library's file (offset, size) and a view of its reflection's text,
        unchecked: for a writer copying an intact library from its file
        (:class:`~pipeline.outputs.file_pieces.Held`)."""
        offset, size, text_at, text_size = self._index[digest]
        return offset, size, memoryview(self._data)[text_at:text_at + text_size]

    def close(self) -> None:
        """Let go of the mapped file (a view still held keeps the mapping until it goes)."""
        data, self._data = self._data, b""
        if isinstance(data, mmap.mmap):
            try:
                data.close()
            except BufferError:  # views of it remain: unmapped when the last one goes
                pass

    def same_bytes(self, data: bytes | bytearray) -> bool:
        """Whether this library's bytes are exactly ``data``."""
        return len(self._data) == len(data) and self._data == data

    def items(self) -> Iterator[tuple[str, bytes]]:
        for digest in self._index:
            yield digest, self.get(digest)

    def verify(self) -> None:
        """Check the file checksum and every blob hash; raises PakCorruptError."""
        stored = self._data[CHECKSUM_AT:CHECKSUM_AT + 32]
        if _checksum(self._data) != stored:
            raise self._corrupt("checksum mismatch")
        for digest in self._index:
            self.get(digest)

    def _corrupt(self, message: str) -> PakCorruptError:
        return PakCorruptError.at(self.name, f"corrupt shader library: {message}")


def _check_header(data: bytes, actual: int, corrupt, name: str) -> tuple[int, int, int]:
    """Version, alignment and entry count; raises through ``corrupt``."""
    if data[:len(MAGIC)] != MAGIC:
        raise corrupt("not a shader library (bad magic)")
    if len(data) < 12:
        raise corrupt("truncated header")
    version = struct.unpack_from("<I", data, 8)[0]
    if version != FORMAT_VERSION:
        older = {1: " (version 1 is the per-chunk .pak of output format 3)",
                 2: " (version 2 held its chunk table inside)"}.get(version, "")
        raise PakVersionError.at(name, f".pak format version {version} is not supported"
                                 f"{older}; this reader knows version {FORMAT_VERSION}: rebuild the outputs")
    if len(data) < HEADER.size:
        raise corrupt("truncated header")
    _, _, count, alignment, _, size, _, reserved_a, reserved_b = HEADER.unpack_from(data)
    if size != actual:
        raise corrupt(f"file is {actual} bytes, header says {size} (truncated?)")
    if alignment not in (4, 8) or HEADER.size + ENTRY.size * count > size or reserved_a or reserved_b:
        raise corrupt("bad header (alignment, entry count or reserved bytes)")
    return version, alignment, count


def _parse_index(raw: bytes, count: int, size: int, alignment: int, corrupt) -> dict[str, Entry]:
    index: dict[str, Entry] = {}
    previous, data_end = b"", HEADER.size + ENTRY.size * count
    for i, (digest, offset, blob_size, text_at, text_size) in enumerate(ENTRY.iter_unpack(raw)):
        if digest <= previous:
            raise corrupt(f"index entry {i} is out of order or duplicated")
        if offset < data_end or offset % alignment or offset + blob_size > size or text_at + text_size > size:
            raise corrupt(f"index entry {i} points outside the file")
        index[digest.hex()] = (offset, blob_size, text_at, text_size)
        previous = digest
    return index


def read_head(path: Path | str) -> tuple[list[str], str] | None:
    """The blob hashes a library's index names (sorted) and the checksum its header records, reading only
    its header and index; None as for :func:`read_index`."""
    def corrupt(message: str) -> PakCorruptError:
        return PakCorruptError.at(str(path), message)

    try:
        with open_regular(path) as f:
            actual = os.fstat(f.fileno()).st_size
            head = f.read(HEADER.size)
            _, alignment, count = _check_header(head, actual, corrupt, str(path))
            index = _parse_index(f.read(ENTRY.size * count), count, actual, alignment, corrupt)
            if len(index) != count:
                return None
    except (OSError, PakError):
        return None
    return list(index), recorded_checksum(head)


def read_index(path: Path | str) -> tuple[frozenset[str], ChunkTable | None] | None:
    """The blob hashes a library's index names and its chunk table (None when the table file beside it
    is missing, malformed or written for another library), reading only the library's header and index.

    None when the file is missing, unreadable, of another version, or when its header or
    index is malformed or its size is not the one the header records (truncated or grown).
    Blob bytes are not read, so neither the checksum nor the blob hashes are checked:
    :meth:`PakReader.verify` does that.
    """
    found = read_head(path)
    if found is None:
        return None
    hashes, checksum = found
    return frozenset(hashes), load_table(table_path(Path(path)), hashes, checksum)


def file_version(path: Path | str) -> int | None:
    """The version a file's header gives when it starts with the pak magic, else None (also when unreadable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC) + 4)
    except OSError:
        return None
    return struct.unpack_from("<I", head, len(MAGIC))[0] if len(head) == len(MAGIC) + 4 and head[:len(MAGIC)] == MAGIC \
        else None


def pak_intact(path: Path | str) -> bool:
    """True when the library at ``path`` reads as one and its bytes match its own checksum and its
    blobs their hashes (every byte read: :meth:`PakReader.verify`); False when missing or not."""
    try:
        PakReader(path).verify()
    except PakError:
        return False
    return True


def _map_file(path: Path) -> tuple[bytes | mmap.mmap, tuple[int, int, int]]:
    """The library's bytes, memory-mapped (read-only; the mapping keeps the file a cook may replace), and
    which file they are: (device, inode, size)."""
    try:
        with open_regular(path) as f:
            stat = os.fstat(f.fileno())
            size, identity = stat.st_size, (stat.st_dev, stat.st_ino, stat.st_size)
            if size > MAX_PAK_BYTES:
                raise PakError.at(str(path), f"shader library is {size} bytes, over the limit of {MAX_PAK_BYTES}")
            if size == 0:
                return b"", identity
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), identity
    except OSError as exc:
        raise PakError.at(str(path), f"cannot read shader library: {exc.strerror or exc}") from None
