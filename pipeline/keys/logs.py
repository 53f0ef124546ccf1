"""Reading a runtime miss log (JSON lines) and a studio's key list (JSON): what a cook can fold in.

A miss log's lines are :mod:`pipeline.runtime.misses` records; each is checked on its
own.  A key list is one JSON object ``{"keys": [KEY, ...]}``, each KEY a key text
(``"pbr/forward{...}"``) or ``{"key": text, "chunk": name}``.  :func:`read_entries`
reads either (by suffix: ``.json`` is a key list, anything else a miss log) into
``(line, record)`` pairs; :mod:`pipeline.keys.fold` adds the keys they name to a cook.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from pipeline.fileio import read_regular

DRAW_FIELDS = ("file", "node", "mesh", "primitive", "material", "variant")
MAX_LOG_BYTES = 64 * 2**20  # a miss log larger than this is refused, not read into memory


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
    axes = record.get("axes")
    if axes is not None and not (isinstance(axes, dict) and all(isinstance(v, (bool, int, str)) for v in axes.values())):
        return f"not a miss record (\"axes\" must be an object of axis values, not {_kind(axes)})"
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


def read_key_list(path: Path | str) -> list[tuple[int, dict | str]]:
    """A key list's entries as (1, {"key", "chunk"?}) records, or (1, error text)."""
    data = read_regular(path, str(path), limit=MAX_LOG_BYTES, what="key list")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return [(1, f"not JSON: {exc}")]
    if not (isinstance(doc, dict) and isinstance(doc.get("keys"), list)):
        return [(1, 'not a key list: expected {"keys": [key text or {"key", "chunk"}, ...]}')]
    out: list[tuple[int, dict | str]] = []
    for item in doc["keys"]:
        item = {"key": item} if isinstance(item, str) else item
        if not (isinstance(item, dict) and isinstance(item.get("key"), str)
                and isinstance(item.get("chunk", ""), str)):
            out.append((1, f"not a key list entry: {orjson.dumps(item).decode()[:80]}"))
            continue
        out.append((1, {"key": item["key"], "chunk": item.get("chunk")}))
    return out


def read_entries(path: Path | str) -> list[tuple[int, dict | str]]:
    return read_key_list(path) if str(path).endswith(".json") else read_log(path)
