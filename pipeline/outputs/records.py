"""Output records: how the cook recognises outputs that are already exactly right.

``outputs:<absolute chunk manifest path>`` (version 3)::

    ["<inputs digest>" | null, <manifest stamp>, "<pak file name>", <pak stamp>]

where a stamp is :mod:`pipeline.stamps`' ``[mtime_ns, size, inode, ctime_ns]`` or null
(no file), and the pak file name is the content-addressed name the manifest gives
(``c00.<16 hex>.pak``).  The inputs digest covers the chunk's keys, its job results,
its level and errors; an equal digest and current stamps mean the chunk's files need
not be read or written.  A pak changed in place with its size and mtime put back
still has another ctime, so it is written again.

``level-outputs:<absolute level manifest path>`` (version 2)::

    ["<digest of the stamps of the level's chunk manifests>", <level manifest stamp>]

Version 2 and 1 records held ``[mtime_ns, size, inode]`` stats: they are misses.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.cache.store import RecordKind
from pipeline.outputs.pak import pak_intact
from pipeline.stamps import Stamp, stamp_of, why_dirty

OUTPUTS = RecordKind("outputs", 3)  # 3: four-field stamps
LEVEL_OUTPUTS = RecordKind("level-outputs", 2)  # 2: four-field stamps


def as_tuple(value):
    """A stored record with its lists as tuples (a cache may keep either)."""
    return tuple(as_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def record_ok(record) -> bool:
    """An outputs record of the right shape, naming a pak file beside its manifest."""
    return isinstance(record, tuple) and len(record) == 4 and isinstance(record[2], str) and "/" not in record[2]


def stat_of(path: Path) -> Stamp | None:
    """The stamp of an output file (:func:`pipeline.stamps.stamp_of`), None when it cannot be stat'ed."""
    return stamp_of(path)


def outputs_entry(digest: str | None, json_path: Path, pak_name: str) -> list:
    """The outputs record of a chunk whose manifest is ``json_path`` and names ``pak_name``."""
    return [digest, stat_of(json_path), pak_name, stat_of(json_path.with_name(pak_name))]


def outputs_current(record, digest: str | None, json_path: Path) -> bool:
    """``record`` (:func:`as_tuple` of the stored one) says the chunk's files are the outputs of the
    inputs ``digest`` covers, untouched since they were written or compared."""
    return digest is not None and record_ok(record) and record[0] == digest \
        and why_dirty(record[1], stat_of(json_path)) is None \
        and pak_current(record, record[2], json_path.with_name(record[2]))


def pak_current(record, pak_name: str, pak_path: Path, *, verify: bool = False) -> bool:
    """The pak ``pak_name`` at ``pak_path`` holds what was last written or checked there.

    Without ``verify``: ``record`` names it and its stamp is the one recorded.  With
    ``verify`` no stamp is trusted: the pak is read and its own checksum and blob
    hashes checked (:func:`pipeline.outputs.pak.pak_intact`).
    """
    if verify:
        return pak_intact(pak_path)
    return record_ok(record) and record[2] == pak_name and why_dirty(record[3], stat_of(pak_path)) is None
