"""Reading input files safely: a regular file within a size limit, or a located error.

Every file the pipeline reads (glTF and buffer files, rule sets, ``pipeline.toml``,
shader sources, manifests, paks, an earlier report) goes through :func:`read_regular`.
It opens the file non-blocking, checks with ``fstat`` on the open descriptor that it
is a regular file (so a FIFO never blocks, a device such as ``/dev/zero`` is never
read, and a swap between check and read cannot happen) and reads at most ``limit``
bytes: a file over the limit is refused instead of filling memory.

:func:`check_inside` is the matching check for *where* a file is: a path whose real
location (symlinks resolved) leaves every allowed root is refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pipeline.errors import PipelineError

DEFAULT_LIMIT = 256 * 2**20  # bytes, for inputs without a configured limit


class FileReadError(PipelineError):
    """An input file cannot be read: missing, not a regular file, over its limit, unreadable."""


def read_regular(path: Path | str, display: str | None = None, *, limit: int = DEFAULT_LIMIT,
                 error: type[PipelineError] = FileReadError, what: str = "", limit_name: str = "") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises ``error`` (located at ``display``, default the path) when the file is
    missing, unreadable, a folder, a FIFO, a device or socket, or over ``limit``.
    ``what`` names the file's role in the message (``"rule set"``), ``limit_name``
    the setting that holds ``limit`` (``"limits.max_file_bytes"``).
    """
    display = str(path) if display is None else display
    prefix = f"cannot read {what}".rstrip() + ": "
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise error.at(display, prefix + (exc.strerror or str(exc))) from None
    except ValueError as exc:  # an embedded NUL in the path
        raise error.at(display, prefix + str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error.at(display, prefix + file_kind(info.st_mode))
        if info.st_size > limit:
            raise error.at(display, _over(info.st_size, limit, limit_name))
        data = _read_all(fd, info.st_size, limit + 1)
        if len(data) > limit:  # grew since the stat
            raise error.at(display, _over(len(data), limit, limit_name))
        return data
    except OSError as exc:
        raise error.at(display, prefix + (exc.strerror or str(exc))) from None
    finally:
        os.close(fd)


def open_regular(path: Path | str):
    """``open(path, "rb")`` that raises OSError for anything but a regular file (never blocks)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"{path}: {file_kind(mode)}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(path: Path | str, display: str | None = None, *, limit: int = DEFAULT_LIMIT,
              error: type[PipelineError] = FileReadError, what: str = "") -> str:
    """:func:`read_regular` decoded as UTF-8 (a decoding error is located too)."""
    data = read_regular(path, display, limit=limit, error=error, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error.at(str(path) if display is None else display,
                       f"not UTF-8 text (byte {exc.start})") from None


def _over(size: int, limit: int, limit_name: str) -> str:
    return f"file is {size} bytes, over the limit of {limit}" + (f" ({limit_name})" if limit_name else "")


def file_kind(mode: int) -> str:
    """What a non-regular file is, for a message: 'a folder', 'a FIFO', 'a device' ..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "not a regular file (a FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not a regular file (a device)"
    if stat.S_ISSOCK(mode):
        return "not a regular file (a socket)"
    return "not a regular file"


def is_regular(path: Path | str) -> bool:
    """True for a regular file (symlinks followed); never blocks."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _read_all(fd: int, expected: int, most: int) -> bytes:
    """Up to ``most`` bytes from ``fd``, to end of file (which may have moved since the stat)."""
    parts: list[bytes] = []
    total = 0
    while total < most:
        chunk = os.read(fd, min(max(expected + 1 - total, 1 << 16), most - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def inside(path: Path | str, roots) -> bool:
    """True when ``path``'s real location (symlinks resolved) is under one of ``roots``."""
    real = Path(os.path.realpath(path))
    return any(real == Path(os.path.realpath(r)) or real.is_relative_to(os.path.realpath(r)) for r in roots)


def check_inside(path: Path | str, roots, display: str, *, error: type[PipelineError] = FileReadError,
                 what: str = "file") -> None:
    """Refuse ``path`` when it (or a symlink on its way) leads outside every root in ``roots``."""
    if not inside(path, roots):
        raise error.at(display, f"{what} leads outside the allowed roots "
                                f"(to {os.path.realpath(path)}); add its folder to allowed_roots in pipeline.toml")


class InsideRoots:
    """:func:`check_inside` for many files of few folders: each folder's real path is resolved once.

    A file that is not a symlink, in a folder whose real path is under a root, is under
    that root; anything else gets the full check.
    """

    def __init__(self, roots) -> None:
        self.roots = tuple(roots)
        self._real = tuple(Path(os.path.realpath(r)) for r in self.roots)
        self._folders: dict[str, bool] = {}

    def check(self, path: str, display: str, *, error: type[PipelineError] = FileReadError, what: str = "file") -> None:
        folder = os.path.dirname(path)
        ok = self._folders.get(folder)
        if ok is None:
            real = Path(os.path.realpath(folder))
            ok = self._folders[folder] = any(real == r or real.is_relative_to(r) for r in self._real)
        if not ok or os.path.islink(path):
            check_inside(path, self.roots, display, error=error, what=what)

