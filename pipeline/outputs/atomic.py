"""Atomic output files: a reader sees the old bytes or the new bytes, never half of them.

How a file is written (:func:`write_atomic`):

1. the bytes go to a temp file in the *same directory* as the target (so the final
   rename never crosses a file system), named ``.<name>.tmp-<pid>-<random>``;
2. the temp file is flushed and ``fsync``-ed;
3. ``os.replace`` moves it over the target in one step (atomic on POSIX and Windows);
4. the directory is ``fsync``-ed (POSIX) so the rename itself survives a power loss.

Temp names are hidden (leading dot) and end in ``.tmp-<pid>-<random>``, so they can
never match an output pattern such as ``*.json`` or ``*.pak``.  A process killed
between steps 1 and 3 leaves such a temp file behind and the target untouched;
:func:`cleanup_stale_temps` removes temps whose writing process is gone (or that are
older than ``max_age`` seconds, for pids reused or from another host).

:func:`write_if_changed` does not touch a file whose bytes would not change, so its
mtime stays put and downstream tools see nothing to do.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.fileio import FileReadError, read_regular
from pipeline.locks import exclusive
from pipeline.outputs.file_pieces import write_pieces

TEMP_MARK = ".tmp-"
_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)-(?P<rand>[0-9a-f]{8,})$")
DEFAULT_STALE_AGE = 3600.0
_TEMP_NAME_BYTES = 200
MAX_COMPARED_BYTES = 1 << 32  # a file larger than any output is rewritten, not read

# Seam for tests: the one call that publishes a finished temp file.
_replace = os.replace


class AtomicWriteError(OSError):
    """An output file could not be written; the previous content (if any) is intact."""


def check_folder(path: Path, what: str) -> None:
    """A folder that exists or can be made (its nearest existing ancestor is a folder), else a located
    error: ``cannot use as the {what}: ... is not a folder``."""
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if os.path.lexists(probe) and not probe.is_dir():
        raise PipelineError.at(str(path), f"cannot use as the {what}: {probe} is not a folder")


def temp_path_for(path: Path | str) -> Path:
    """A fresh temp name next to ``path``: ``.<name>.tmp-<pid>-<random hex>``."""
    path = Path(path)
    name = path.name.encode()[:_TEMP_NAME_BYTES].decode(errors="ignore")  # a name near NAME_MAX still fits
    return path.with_name(f".{name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def is_temp_name(name: str) -> bool:
    """True for names made by :func:`temp_path_for`."""
    return _TEMP_RE.match(name) is not None


def write_atomic(path: Path | str, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; creates parent folders."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a regular file where a folder of the path should be
        raise AtomicWriteError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from None
    temp = temp_path_for(path)
    try:
        _write_synced(temp, data)
        _replace(temp, path)
    except BaseException as exc:
        _unlink_quietly(temp)
        if isinstance(exc, OSError) and not isinstance(exc, AtomicWriteError):
            raise AtomicWriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    _fsync_dir(path.parent)


class Staged:
    """Files written now (each to its temp file, fsync-ed) and published together later.

    :meth:`publish` renames every temp over its target, then fsyncs each folder once:
    what a cook uses to put its chunk indexes in place after the library holding their
    blobs (:mod:`pipeline.outputs.write_library`).  A rename whose folder fsync a power loss
    prevents leaves the old file, which that library still covers.
    """

    def __init__(self) -> None:
        self.files: dict[Path, Path] = {}  # target -> its temp

    def write(self, path: Path | str, data: bytes | Iterable[bytes | bytearray | memoryview]) -> None:
        """Stage ``data`` (bytes, or pieces in order) for ``path``: written to its temp file and fsync-ed."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise AtomicWriteError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from None
        self.discard(path)
        _check_name_fits(path)  # the temp's name is shortened to fit: the rename must not fail on publish
        temp = temp_path_for(path)
        try:
            _write_synced(temp, data)
        except OSError as exc:
            _unlink_quietly(temp)
            raise AtomicWriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        self.files[path] = temp

    def discard(self, path: Path | str) -> None:
        """Forget the staged write of ``path`` (its temp removed)."""
        temp = self.files.pop(Path(path), None)
        if temp is not None:
            _unlink_quietly(temp)

    def abandon(self) -> None:
        for path in list(self.files):
            self.discard(path)

    def publish(self) -> list[Path]:
        """Rename every staged file into place (sorted by path), then fsync each folder once."""
        done = []
        try:
            for path in sorted(self.files):
                _replace(self.files[path], path)
                done.append(path)
        finally:
            for path in done:
                del self.files[path]
            self.abandon()
        for folder in sorted({p.parent for p in done}):
            _fsync_dir(folder)
        return done


def write_if_changed(path: Path | str, data: bytes) -> bool:
    """Write ``data`` atomically unless ``path`` already holds exactly these bytes.

    Returns True when the file was written, False when it was left untouched.
    """
    if read_if_exists(path) == data:
        return False
    write_atomic(path, data)
    return True


def _check_name_fits(path: Path) -> None:
    """Raise the error a rename to ``path`` would give when its name is longer than its folder allows."""
    try:
        limit = os.pathconf(path.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        return
    if len(os.fsencode(path.name)) > limit:
        raise AtomicWriteError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(path))


def read_if_exists(path: Path | str) -> bytes | None:
    """The bytes of ``path``, or None when it is missing or not a readable file."""
    try:
        return read_regular(path, limit=MAX_COMPARED_BYTES)
    except FileReadError:
        return None


def cleanup_stale_temps(root: Path | str, *, max_age: float = DEFAULT_STALE_AGE,
                        recursive: bool = True) -> list[Path]:
    """Delete temp files left by killed writers under ``root``; returns what was removed.

    A temp is stale when the pid in its name is not a running process, or when it
    is older than ``max_age`` seconds.  Temps of live writers are left alone, so a
    concurrent cook on the same output folder is safe.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    pattern = "**/.*" if recursive else ".*"
    removed = []
    for candidate in sorted(root.glob(pattern)):
        if _is_stale_temp(candidate, max_age) and _unlink_quietly(candidate):
            removed.append(candidate)
    return removed


def _is_stale_temp(path: Path, max_age: float) -> bool:
    match = _TEMP_RE.match(path.name)
    if match is None or not path.is_file():
        return False
    if not _pid_alive(int(match["pid"])):
        return True
    try:
        return time.time() - path.stat().st_mtime > max_age
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists but not ours (or cannot tell): keep it
    return True


def _write_synced(temp: Path, data: bytes | Iterable[bytes | bytearray | memoryview]) -> None:
    """``data`` (bytes, or pieces written one after another) into the new file ``temp``, fsync-ed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(temp, flags, 0o666)  # the umask applies, as for any new file
    with os.fdopen(fd, "wb") as handle:
        if isinstance(data, (bytes, bytearray, memoryview)):
            handle.write(data)
        else:
            write_pieces(handle, data)  # a library's pieces: its held blobs copied file to file
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _unlink_quietly(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:
        return False
    return True


def lock_path_for(directory: Path | str, purpose: str = "") -> Path:
    """The lock file guarding ``directory`` (for ``purpose``, when a folder has more than one lock): in the
    temp folder, named by a hash of its absolute path, so no lock file ever appears among the outputs."""
    name = str(Path(directory).resolve()) + (f"\0{purpose}" if purpose else "")
    key = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(tempfile.gettempdir()) / "pipeline-locks" / f"{key}.lock"


@contextlib.contextmanager
def locked(directory: Path | str, purpose: str = "") -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` for a read-modify-write inside it.

    Used where several processes rebuild one file from shared state (a level
    manifest from its chunks' manifests): without it the last writer could drop
    what another wrote in between.  The lock is :func:`pipeline.locks.exclusive` (``flock``
    on POSIX, ``msvcrt.locking`` on Windows) on a file in the temp folder named by
    the folder's path (:func:`lock_path_for`): processes of one machine exclude each
    other, and no lock file ever appears among the outputs.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lock = lock_path_for(directory, purpose)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(lock):
        yield
