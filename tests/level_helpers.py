"""What a level manifest's rows say, counted from the document itself (the level manifest tests)."""

from __future__ import annotations


def rows_naming(doc: dict) -> tuple[list[int], list[int]]:
    """Per position of the document's keys and pipelines, the chunk rows that name it, counted from its rows."""
    keys, states = [0] * len(doc["keys"]), [0] * len(doc["pipelines"])
    for row in doc["chunks"].values():
        for k in row["keys"][0::2]:
            keys[k] += 1
        for p in row["pipelines"]:
            states[p] += 1
    return keys, states
