"""The miss log: every time the runtime drew with a fallback because a draw's key was missing.

A miss log is JSON lines, one object per miss, appended (and flushed) as they happen so a
crash loses nothing::

    {"chunk": "forest/c00", "draw": {"file", "node", "mesh", "primitive", "material", "variant"},
     "key": "pbr/forward{...}", "pass": "pbr/forward", "time": "2026-01-01T12:00:00.000000+00:00"}

A draw whose pass has runtime axes and no row for the values the renderer asked for logs
``"axes": {axis: value}`` too, ``key`` then being the pass's key at its first combination.
``key`` is null when the draw is not in the chunk's manifest at all (content the cook never
saw, such as a material made at run time).  The file is created when the log is opened, so
a run in which no draw missed leaves an empty log, not none.  ``pipeline check-log`` reads it
back (:mod:`pipeline.runtime.checklog`; an empty log: no misses): a regular file within
:data:`MAX_LOG_BYTES`, each line checked on its own.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

import orjson

from pipeline.keys.logs import MAX_LOG_BYTES, read_log, record_problem  # noqa: F401  (re-exported)


@dataclass
class MissLog:
    """A miss log opened for appending; the file exists from here on, empty until a draw misses."""

    path: Path

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()

    def append(self, *, key: str | None, chunk: str, draw: dict, pass_: str, axes: dict | None = None) -> None:
        record = {"key": key, "chunk": chunk, "draw": draw, "pass": pass_,
                  "time": datetime.datetime.now(datetime.timezone.utc).isoformat()}
        if axes is not None:  # the runtime axis values asked for, which the draw's axes table does not hold
            record["axes"] = axes
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            f.write(orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n")
            f.flush()


