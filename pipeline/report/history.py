"""``--history DIR``: earlier JSON reports as a trend of required keys, binaries and bytes."""

from __future__ import annotations

from pathlib import Path

import orjson


def load_history(folder: Path, current: dict | None = None) -> list[dict]:
    """One point per readable JSON report in ``folder`` (oldest first), then ``current``.

    A point: ``{"label", "timestamp", "required", "binaries", "bytes", "compressed"}``;
    figures a report lacks are None.  Files that are not reports are skipped.
    """
    points = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            doc = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("totals"), list):
            points.append(point(doc, path.stem))
    points.sort(key=lambda p: (p["timestamp"] or "", p["label"]))
    if current is not None:
        points.append(point(current, "this report"))
    return points


def point(doc: dict, label: str) -> dict:
    totals = [t for t in doc.get("totals") or [] if isinstance(t, dict)]
    sizes = (doc.get("sizes") or {}).get("total") or {}
    binaries = [t.get("unique_binaries") for t in totals]
    return {"label": label, "timestamp": (doc.get("provenance") or {}).get("timestamp"),
            "required": sum(int(t.get("required") or 0) for t in totals),
            "binaries": None if not binaries or None in binaries else sum(binaries),
            "bytes": sizes.get("bytes"), "compressed": sizes.get("compressed")}
