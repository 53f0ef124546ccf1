"""Runtime axis tables in the chunk index (output format 5): a pass choice's combination -> key rows.

A draw's choice for a pass with runtime axes carries a fifth item, its axis rows
``[[axis values, key, pipeline or null], ...]`` by positions in the index's
``axis_values`` table (the distinct ``{axis: value}`` combinations, sorted by canonical
JSON), ``keys`` and ``pipelines``; its fourth item (the fallback pipeline) is then
null when the pass declares no fallback.  An index without runtime axes has no
``axis_values`` table and is byte-identical to one written before axes existed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pipeline.digest import canonical_bytes


def axis_values(draws) -> tuple[list[dict], dict[int, int]]:
    """The distinct combinations the draws' axis rows name, sorted, and each one's position by the
    ``id`` of a row's values (the draws of a use share their rows and often their ``passes`` object:
    each is read once)."""
    found: dict[bytes, dict] = {}
    raw_of: dict[int, bytes] = {}
    seen: set[int] = set()
    for d in draws:
        passes = d["passes"]
        if id(passes) in seen:  # the draws hold every passes object while this runs: ids stay theirs
            continue
        seen.add(id(passes))
        for use in passes.values():
            for row in use.get("axes", ()):
                values = row["values"]
                raw = raw_of.get(id(values))
                if raw is None:
                    raw = raw_of[id(values)] = canonical_bytes(values)
                    found.setdefault(raw, values)
    order = sorted(found)
    at = {raw: i for i, raw in enumerate(order)}
    return [found[raw] for raw in order], {ident: at[raw] for ident, raw in raw_of.items()}


def encode_rows(use: Mapping, at: Mapping[int, int], key_at: Mapping[str, int],
                pipeline_at: Mapping[str, int]) -> list[list]:
    """A choice's axis rows by positions (``at``: :func:`axis_values`'s, by the ``id`` of a row's values)."""
    return [[at[id(row["values"])], key_at[row["key"]], pipeline_at.get(row.get("pipeline"))]
            for row in use["axes"]]


def decode_rows(rows: Any, table: list, texts: list, ids: list, pick: Callable[..., Any], at) -> list[dict]:
    """A choice's axis rows back into ``{"values", "key", "pipeline"?}`` objects; a bad row is a located error."""
    if not isinstance(rows, list):
        raise at.error("expected [[axis values, key, pipeline], ...] as a pass's fifth item")
    out = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 3):
            raise at.error("expected [axis values, key, pipeline] per axis row")
        item = {"values": dict(pick(table, row[0], at)), "key": pick(texts, row[1], at)}
        if row[2] is not None:
            item["pipeline"] = pick(ids, row[2], at)
        out.append(item)
    return out
