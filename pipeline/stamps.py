"""File stamps: the one stat signature that says a file is unchanged without reading it.

A stamp is ``(mtime_ns, size, inode, ctime_ns)``, as ninja and git judge a file
unchanged.  An edit that keeps the size and puts the mtime back (``touch -d``,
``os.utime``) still moves the ctime, which no user tool can set, and a file replaced
by another one (an atomic rename, a copy over it) has another inode.

Every up-to-date check of the package decides with :func:`why_dirty`, or by comparing
all four fields at once: the scan records, the chunk-key records, the output records
and the no-op cook (:mod:`pipeline.cook.noop`, which loads this module before anything
else, so it imports the standard library alone).
"""

from __future__ import annotations

import os

Stamp = tuple[int, int, int, int]

NOT_RECORDED = "not recorded"
MISSING = "missing"
SIZE = "size changed"
MTIME = "modified (mtime)"
INODE = "replaced (inode)"
CTIME = "changed in place (ctime)"


def of_stat(st: os.stat_result) -> Stamp:
    """The stamp of an ``os.stat`` result."""
    return st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns


def stamp_of(path: str | os.PathLike) -> Stamp | None:
    """The stamp of the file at ``path`` (symlinks followed), or None when it cannot be stat'ed."""
    try:
        return of_stat(os.stat(path))
    except (OSError, ValueError):
        return None


def why_dirty(recorded, now: Stamp | None) -> str | None:
    """None when the file whose stamp is ``now`` (None: missing) is the one ``recorded``, else why not.

    ``recorded`` is a stamp as stored (a list or tuple of four integers); anything else
    (nothing, a stamp of another layout) is ``"not recorded"``.  Otherwise the first
    difference, in this order, names the reason: ``"missing"``, ``"size changed"``,
    ``"modified (mtime)"``, ``"replaced (inode)"``, ``"changed in place (ctime)"``.
    """
    if not _is_stamp(recorded):
        return NOT_RECORDED
    if now is None:
        return MISSING
    mtime, size, inode, ctime = recorded
    if size != now[1]:
        return SIZE
    if mtime != now[0]:
        return MTIME
    if inode != now[2]:
        return INODE
    if ctime != now[3]:
        return CTIME
    return None


def _is_stamp(value) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 4 \
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
