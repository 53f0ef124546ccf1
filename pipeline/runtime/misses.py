"""The miss log: every time the runtime drew with a fallback because a draw's key was missing.

A miss log is JSON lines, one object per miss, appended (and flushed) as they happen so a
crash loses nothing::

    {"chunk": "forest/c00", "draw": {"file", "node", "mesh", "primitive", "material", "variant"},
     "key": "pbr/forward{...}", "pass": "pbr/forward", "time": "2026-01-01T12:00:00.000000+00:00"}

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

from pipeline.outputs.contract import DRAW_FIELDS
from pipeline.fileio import read_regular

MAX_LOG_BYTES = 64 * 2**20  # a miss log larger than this is refused, not read into memory


@dataclass
class MissLog:
    """A miss log opened for appending; the file exists from here on, empty until a draw misses."""

    path: Path

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()

    def append(self, *, key: str | None, chunk: str, draw: dict, pass_: str) -> None:
        record = {"key": key, "chunk": chunk, "draw": draw, "pass": pass_,
                  "time": datetime.datetime.now(datetime.timezone.utc).isoformat()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            f.write(orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n")
            f.flush()


def read_log(path: Path | str) -> list[tuple[int, dict | str]]:
    """(line number, record) per non-empty line; a line that is not a miss record gives its error text.

    The log is read as a regular file of at most :data:`MAX_LOG_BYTES` (a FIFO or a device
    is a located error, never a wait or an endless read).  Each line is checked on its own:
    a record whose fields have the wrong type is that line's error, and the other lines
    are still read.
    """
    data = read_regular(path, str(path), limit=MAX_LOG_BYTES, what="miss log")
    out: list[tuple[int, dict | str]] = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            out.append((number, f"not JSON: {exc}"))
            continue
        out.append((number, record_problem(record) or record))
    return out


def record_problem(record: object) -> str | None:
    """Why a decoded line is not a miss record (fields missing or of the wrong type), or None."""
    if not isinstance(record, dict):
        return f"not a miss record ({_kind(record)}, not an object)"
    missing = [f for f in ("key", "chunk", "draw") if f not in record]
    if missing:
        return f"not a miss record (missing {', '.join(missing)})"
    chunk, key, draw, pass_ = record["chunk"], record["key"], record["draw"], record.get("pass")
    if not isinstance(chunk, str) or not chunk:
        return f"not a miss record (\"chunk\" must be a chunk name, not {_kind(chunk)})"
    if key is not None and not isinstance(key, str):
        return f"not a miss record (\"key\" must be a key or null, not {_kind(key)})"
    if pass_ is not None and not isinstance(pass_, str):
        return f"not a miss record (\"pass\" must be a pass name or null, not {_kind(pass_)})"
    if not isinstance(draw, dict):
        return f"not a miss record (\"draw\" must be an object, not {_kind(draw)})"
    for name in DRAW_FIELDS:
        if isinstance(draw.get(name), (list, dict)):
            return f"not a miss record (\"draw.{name}\" must be a string, a number or null, not {_kind(draw[name])})"
    return None


def _kind(value: object) -> str:
    """A JSON value's kind, for a message."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    return {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)
