"""Output records: how the cook recognises outputs that are already exactly right.

``outputs:<absolute chunk index path>`` (version 4)::

    [[["<input name>", "<digest>"], ...] | null, <index stamp>]

where a stamp is :mod:`pipeline.stamps`' ``[mtime_ns, size, inode, ctime_ns]`` or null
(no file).  The named input digests (:mod:`pipeline.outputs.chunk_inputs`) cover the
writing code, the job results, the chunk's keys, its level and errors; equal digests and
stamp mean the chunk's index need not be read or written, and the names of those that
differ say why it is.  An index changed in place with its size and mtime put back still
has another ctime, so it is written again.  The blobs it names live in the shader
library, kept by :mod:`pipeline.outputs.write_library` (its own ``library`` record).

``level-outputs:<absolute level manifest path>`` (version 3)::

    ["<digest of the stamps of the level's chunk indexes>", <level manifest stamp>,
     {"<chunk index path>": <stamp>, ...}]

(the stamps themselves let a cook of one chunk trust the level manifest's entries for the
indexes that did not change, :mod:`pipeline.outputs.write_level`).

Records of earlier versions (three-field stats, per-chunk paks) are misses.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.cache.store import RecordKind
from pipeline.stamps import MISSING, NOT_RECORDED, Stamp, stamp_of, why_dirty

OUTPUTS = RecordKind("outputs", 4)  # 4: no per-chunk pak
LEVEL_OUTPUTS = RecordKind("level-outputs", 3)  # 3: the stamp of each chunk index (then, optional: the users)


def as_tuple(value):
    """A stored record with its lists as tuples (a cache may keep either)."""
    return tuple(as_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def record_ok(record) -> bool:
    """An outputs record of the right shape."""
    return isinstance(record, tuple) and len(record) == 2


def stat_of(path: Path) -> Stamp | None:
    """The stamp of an output file (:func:`pipeline.stamps.stamp_of`), None when it cannot be stat'ed."""
    return stamp_of(path)


def outputs_entry(digest: str | None, json_path: Path) -> list:
    """The outputs record of a chunk whose index is ``json_path``."""
    return [digest, stat_of(json_path)]


def outputs_current(record, inputs, json_path: Path) -> str | None:
    """None when ``record`` (:func:`as_tuple` of the stored one) says the chunk's index is the output of
    ``inputs`` (its named input digests), untouched since it was written or compared; else why not,
    as ``--explain`` prints it."""
    if not record_ok(record):
        return "recorded state absent" if json_path.exists() or record is not None else "new"
    if inputs is not None and record == as_tuple(outputs_entry(inputs, json_path)):
        return None
    changed = changed_inputs(record[0], as_tuple(inputs)) if inputs is not None else ""
    if changed:
        return f"inputs changed: {changed}"
    files = _file_change(json_path.name, record[1], stat_of(json_path))
    return files if files or inputs is not None else "inputs unknown (no fingerprint of the chunk's files)"


def level_outputs_current(record, state: str, path: Path) -> str | None:
    """The same decision for a level manifest: None when ``record`` holds ``state`` (the stats of the
    level's chunk manifests) and the file's stat; else why it is rebuilt."""
    if not (isinstance(record, tuple) and len(record) in (2, 3, 4)):
        return "recorded state absent" if path.exists() or record is not None else "new"
    if record[0] != state:
        return "inputs changed: chunk manifests"
    return _file_change(path.name, record[1], stat_of(path))


def changed_inputs(recorded, inputs) -> str:
    """The names of the inputs whose digests differ, comma-separated ("" when none does); a record of
    another layout names them all."""
    try:
        old = dict(recorded)
    except (TypeError, ValueError):
        old = {}
    return ", ".join(name for name, digest in inputs if old.get(name) != digest)


def _file_change(name: str, recorded, now) -> str | None:
    """Why a file's stamp is not the recorded one (:func:`pipeline.stamps.why_dirty`), naming the file."""
    why = why_dirty(recorded, as_tuple(now))
    if why is None:
        return None
    if why == MISSING:
        return f"file missing: {name}"
    if why == NOT_RECORDED:
        return f"modified on disk: {name}"
    return f"modified on disk ({why}): {name}"
