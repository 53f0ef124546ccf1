"""Output records: how the cook recognises outputs that are already exactly right.

``outputs:<absolute chunk manifest path>`` (version 2)::

    ["<inputs digest>" | null, <manifest stat>, "<pak file name>", <pak stat>]

where a stat is ``[mtime_ns, size, inode]`` or null (no file), and the pak file name is
the content-addressed name the manifest gives (``c00.<16 hex>.pak``).  The inputs digest
covers the chunk's keys, its job results, its level and errors; equal digest and
stats mean the chunk's files need not be read or written.

``level-outputs:<absolute level manifest path>`` (version 1)::

    ["<digest of the stats of the level's chunk manifests>", <level manifest stat>]
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.cache.store import RecordKind

OUTPUTS = RecordKind("outputs", 2)
LEVEL_OUTPUTS = RecordKind("level-outputs", 1)


def as_tuple(value):
    """A stored record with its lists as tuples (a cache may keep either)."""
    return tuple(as_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def record_ok(record) -> bool:
    """An outputs record of the right shape, naming a pak file beside its manifest."""
    return isinstance(record, tuple) and len(record) == 4 and isinstance(record[2], str) and "/" not in record[2]


def stat_of(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def outputs_entry(digest: str | None, json_path: Path, pak_name: str) -> list:
    """The outputs record of a chunk whose manifest is ``json_path`` and names ``pak_name``."""
    return [digest, stat_of(json_path), pak_name, stat_of(json_path.with_name(pak_name))]


def outputs_current(record, digest: str | None, json_path: Path) -> bool:
    """``record`` (:func:`as_tuple` of the stored one) says the chunk's files are the outputs of the
    inputs ``digest`` covers, untouched since they were written or compared."""
    return digest is not None and record_ok(record) and record == as_tuple(outputs_entry(digest, json_path, record[2]))
