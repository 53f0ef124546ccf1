"""A file written as pieces one after another, some of them extents of another open file copied file to
file: how a shader library grows (:mod:`pipeline.outputs.write_library`) without reading every blob of the
old library into the process and writing it out again.

:class:`Held` is such an extent; :func:`write_pieces` writes bytes-like pieces with the file's own writes
and held ones with ``os.copy_file_range`` (the kernel copies the bytes, or shares the blocks on a file
system that can), or a read and a write where the system has no such call or refuses it (another file
system, an old kernel).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable


class Held:
    """``size`` bytes at ``offset`` of an open file (``source``, a descriptor): a blob of the library a new
    one is written over, say, which :meth:`copy_to` copies file to file (``os.copy_file_range``: the kernel
    copies, or shares the blocks where the file system can) instead of reading it into this process."""

    __slots__ = ("source", "offset", "size")

    def __init__(self, source: int, offset: int, size: int) -> None:
        self.source, self.offset, self.size = source, offset, size

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        """The bytes themselves (where a writer needs them whole)."""
        parts, done = [], 0
        while done < self.size:
            part = os.pread(self.source, self.size - done, self.offset + done)
            if not part:
                raise OSError(errno.EIO, "the file being copied is shorter than the extent")
            parts.append(part)
            done += len(part)
        return b"".join(parts)

    def copy_to(self, target: int, at: int) -> None:
        """Write the bytes at ``at`` of the file open as ``target``; OSError when the source is shorter."""
        done = 0
        while done < self.size:
            count = _copy_range(self.source, target, self.size - done, self.offset + done, at + done)
            if count <= 0:
                raise OSError(errno.EIO, "the file being copied is shorter than the extent")
            done += count


def _copy_range(source: int, target: int, count: int, offset: int, at: int) -> int:
    copy = getattr(os, "copy_file_range", None)
    if copy is not None:
        try:
            return copy(source, target, count, offset, at)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
    data = os.pread(source, min(count, 1 << 24), offset)  # where the system cannot: read, then written
    return os.pwrite(target, data, at) if data else 0


def write_pieces(handle, pieces: Iterable) -> None:
    """Write ``pieces`` (bytes-like, or :class:`Held` extents of another file) one after another to the
    open binary file ``handle``."""
    for piece in pieces:
        copy_to = getattr(piece, "copy_to", None)
        if copy_to is None:
            handle.write(piece)
            continue
        handle.flush()
        at = handle.tell()
        copy_to(handle.fileno(), at)
        handle.seek(at + len(piece))
