"""``--since OLD.json``: keys added and removed against an earlier JSON report.

Beside the keys: the pipeline states they add and remove, and the blob bytes a patch ships
(blobs the new keys use that no key of the earlier report used) and no longer ships, when
both reports were made with compile figures (``totals``).
"""

from __future__ import annotations

import posixpath
from pathlib import Path

import orjson

from pipeline.errors import Diagnostic, Location
from pipeline.fileio import read_regular
from pipeline.report.errors import ReportError
from pipeline.report.rows import KeyRow, SinceDiff


def since_diff(old_path: Path, keys: list[KeyRow], scope: dict | None = None, *, grid_cell: bool = False
               ) -> SinceDiff:
    """Keys added and removed against the ``keys`` of an earlier JSON report.

    When the earlier report covered another scope (a whole world against one chunk
    now), the old keys are first narrowed to those with a file inside the current
    scope, and the diff carries a warning naming both scopes: without that every
    key of the rest of the world would show as removed.  A folder chunk holds the files
    directly in its folder; a grid cell (``grid_cell``) any file of its level's folder.
    """
    old_rows = load_old_rows(old_path)
    old = {k: [str(f) for f in row.get("files") or []] for k, row in old_rows.items()}
    scope = _scope(scope)
    old_scope = _scope(_old_scope(old_path))
    warning = None
    if old_scope != scope:
        kept = {k: files for k, files in old.items() if any(_in_scope(f, scope, grid_cell) for f in files)}
        warning = (f"scope mismatch: {old_path} covers {_describe(old_scope)}, this report {_describe(scope)}; "
                   f"compared only the {len(kept)} of its {len(old)} keys with a file in {_describe(scope)}")
        old = kept
    new = {row.key: row.files for row in keys}
    added = tuple((k, tuple(new[k])) for k in sorted(set(new) - set(old)))
    removed = tuple((k, tuple(old[k])) for k in sorted(set(old) - set(new)))
    now = {row.key: row for row in keys}
    totals = {"keys": {"added": len(added), "removed": len(removed)},
              "pipeline_states": {"added": sum(now[k].pipelines for k, _ in added),
                                  "removed": sum(int(old_rows[k].get("pipelines") or 0) for k, _ in removed)}}
    new_blobs = {d: n for row in keys for d, n in (row.blobs or {}).items()}
    old_blobs = {d: n for k in old for d, n in (old_rows[k].get("blobs") or {}).items()}
    if new_blobs and old_blobs:
        totals["bytes"] = {"added": sum(n for d, n in new_blobs.items() if d not in old_blobs),
                           "removed": sum(n for d, n in old_blobs.items() if d not in new_blobs)}
    return SinceDiff(str(old_path), added, removed, warning, totals)


def _scope(scope) -> dict:
    scope = scope if isinstance(scope, dict) else {}
    return {"level": scope.get("level"), "chunk": scope.get("chunk")}


def _old_scope(path: Path) -> dict | None:
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc.get("scope") if isinstance(doc, dict) else None


def _describe(scope: dict) -> str:
    if scope["chunk"]:
        return f"chunk {scope['chunk']}"
    if scope["level"]:
        return f"level {scope['level']}"
    return "the whole world"


def _in_scope(file: str, scope: dict, grid_cell: bool = False) -> bool:
    """Whether a world-relative file belongs to ``scope``: a folder chunk's own files (a folder below
    it is a chunk of its own), or for a grid cell the files of its level's folder."""
    if scope["chunk"]:
        chunk = scope["chunk"]
        return posixpath.dirname(file) == (posixpath.dirname(chunk) if grid_cell else chunk)
    if scope["level"]:
        return file.startswith(scope["level"] + "/")
    return True


def load_old_keys(path: Path) -> dict[str, list[str]]:
    """key text -> files, from a ``pipeline report --format json`` document."""
    return {k: [str(f) for f in row.get("files") or []] for k, row in load_old_rows(path).items()}


def load_old_rows(path: Path) -> dict[str, dict]:
    """key text -> its row (files, pipelines, blobs ...), from a ``pipeline report --format json`` document."""
    data = read_regular(path, str(path), error=ReportError, what="earlier report")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ReportError(Diagnostic(Location(str(path)), f"not a JSON report: {exc}"))
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, dict) and isinstance(k.get("key"), str) for k in keys):
        raise ReportError(Diagnostic(Location(str(path), pointer="/keys"),
                                     "not a pipeline report: expected a 'keys' list of {\"key\", \"files\"}"))
    return {k["key"]: k for k in keys}
