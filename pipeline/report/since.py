"""``--since OLD.json``: keys added and removed against an earlier JSON report."""

from __future__ import annotations

from pathlib import Path

import orjson

from pipeline.errors import Diagnostic, Location
from pipeline.report.errors import ReportError
from pipeline.report.rows import KeyRow, SinceDiff


def since_diff(old_path: Path, keys: list[KeyRow]) -> SinceDiff:
    """Keys added and removed against the ``keys`` of an earlier JSON report."""
    old = load_old_keys(old_path)
    new = {row.key: row.files for row in keys}
    added = tuple((k, tuple(new[k])) for k in sorted(set(new) - set(old)))
    removed = tuple((k, tuple(old[k])) for k in sorted(set(old) - set(new)))
    return SinceDiff(str(old_path), added, removed)


def load_old_keys(path: Path) -> dict[str, list[str]]:
    """key text -> files, from a ``pipeline report --format json`` document."""
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ReportError(Diagnostic(Location(str(path)), f"cannot read earlier report: {exc.strerror or exc}"))
    except orjson.JSONDecodeError as exc:
        raise ReportError(Diagnostic(Location(str(path)), f"not a JSON report: {exc}"))
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, dict) and isinstance(k.get("key"), str) for k in keys):
        raise ReportError(Diagnostic(Location(str(path), pointer="/keys"),
                                     "not a pipeline report: expected a 'keys' list of {\"key\", \"files\"}"))
    return {k["key"]: [str(f) for f in k.get("files") or []] for k in keys}
