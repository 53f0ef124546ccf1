"""An exclusive lock between the processes of one machine, held on a lock file.

On POSIX it is ``fcntl.flock`` on the open lock file, taken directly: the same lock
``filelock.FileLock`` takes there (each excludes the other), without importing
``filelock``, whose import was about a twentieth of the CPU of a cook after a one-file edit.
Where there is no ``fcntl`` (Windows: ``msvcrt.locking``) it is ``filelock.FileLock``,
imported then.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def exclusive(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made when missing) for the block, waiting while
    another process holds it.  Not re-entrant: a process that takes it twice waits for itself."""
    if fcntl is None:
        from filelock import FileLock

        with FileLock(os.fspath(path)):
            yield
        return
    fd = _locked_descriptor(os.fspath(path))
    try:
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)  # released for a forked worker's copy of the descriptor too
        finally:
            os.close(fd)


def _locked_descriptor(path: str) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file: a read-only descriptor locks it as well
            fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink:
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the file was removed while this waited: the lock is on a new file of that name
