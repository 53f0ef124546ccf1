"""A level manifest brought up to date by replacing the parts of the chunks that changed.

A level manifest lists, per chunk, the keys (with draws) and pipeline states it uses, by
position in the union's tables (:mod:`pipeline.outputs.level_index`).  When one chunk of
a level of 250 is cooked again, rebuilding the union from every chunk's part decodes,
merges and encodes every chunk's rows: a cost that grows with the level.
:func:`updated_level` instead

- decodes only the union's tables (its keys, pipeline states and errors) of the
  document on disk,
- counts each key's users from the raw rows of the chunks that did not change (C loops over
  flat integer lists), and takes their draws as the union's less the rows of the chunks
  that changed or left: only those rows are read one number at a time,
- adds the parts of the chunks that did (built this cook, or read again), drops the
  chunks that left,
- encodes the new tables and carries every unchanged chunk's rows over, each position
  mapped from the old table to the new one (both sorted, so the rows stay sorted).

The result is the same bytes a rebuild from every chunk gives
(:func:`pipeline.outputs.manifest.level_manifest`).  Where it could differ it gives
``None`` and the caller rebuilds: a chunk listed as stale, a changed chunk whose blobs
for a key differ from the others' (which one is stale is the rebuild's to decide), or
a document whose rows are not what this module writes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from itertools import chain
from typing import Any

from pipeline.digest import sorted_unique
from pipeline.outputs import manifest as mf


def updated_level(doc: Mapping[str, Any], union: Mapping[str, Any], level: str, kept: Iterable[str],
                  parts: Iterable[Any]) -> dict | None:
    """The new document of a level whose manifest on disk is ``doc`` (its union's fields decoded:
    ``union``, :func:`pipeline.outputs.manifest.load_level_union`); ``kept``: the chunks whose rows in
    ``doc`` still hold; ``parts``: every other chunk of the level as it is now (a
    :class:`~pipeline.outputs.write_level.Part` or a chunk manifest).  ``None``: rebuild it whole.

    The kept chunks' draws are the union's less the rows of the chunks that are not kept (the
    union's draws are the sums of every row of the document this cook's record names), so only
    those rows are read one by one; the kept rows are counted and carried whole."""
    rows = doc.get("chunks")
    if not isinstance(rows, dict) or any(e.get("message") == mf.STALE for e in union["errors"]):
        return None
    texts, ids = list(union["keys"]), list(union["pipelines"])
    kept = sorted(kept)
    counted = _counted(rows, kept, [union["keys"][t].draws for t in texts], len(ids))
    if counted is None:
        return None
    users, draws, used = counted
    base = {texts[i]: union["keys"][texts[i]] for i in range(len(texts)) if users[i]}
    sums = {texts[i]: draws[i] for i in range(len(texts)) if users[i]}
    pipelines = {ids[j]: union["pipelines"][ids[j]] for j in range(len(ids)) if used[j]}
    kept_set = set(kept)
    errors = [e for e in union["errors"] if e.get("chunk") in kept_set]
    parts = sorted(parts, key=lambda m: m.chunk)
    for m in parts:
        counts = getattr(m, "counts", None) or {text: e.draws for text, e in m.keys.items()}
        for text, entry in m.keys.items():
            old = base.setdefault(text, entry)
            if old is not entry:
                if old.stages != entry.stages:
                    return None  # one of them is stale: the rebuild says which
                mf.same_key(old, entry)
            sums[text] = sums.get(text, 0) + counts[text]
        pipelines.update(m.pipelines)
        errors.extend({**e, "chunk": m.chunk} for e in m.errors)
    merged = {text: replace(base[text], draws=sums[text], chunks=(), render_states=(), specialization={})
              for text in sorted(base)}
    # the rows of the parts are encoded, the kept ones carried below (the dump sorts the chunks)
    new = mf.LevelManifest(level, tuple(m.chunk for m in parts), merged,
                           tuple(sorted_unique(errors)), dict(sorted(pipelines.items())),
                           {m.chunk: (dict(getattr(m, "counts", None) or {t: e.draws for t, e in m.keys.items()}),
                                      tuple(sorted(m.pipelines))) for m in parts})
    out = new.to_json()
    key_at, pipeline_at = {t: i for i, t in enumerate(merged)}, {p: i for i, p in enumerate(new.pipelines)}
    key_map = [key_at.get(t, -1) for t in texts]
    pipeline_map = [pipeline_at.get(p, -1) for p in ids]
    # an edit seldom drops a key or pipeline state of its level, or adds one sorting before another: then
    # no position moves and the rows are carried as they are; else each kept position is mapped (both
    # tables are sorted, so a row stays ascending)
    keys_moved, pipelines_moved = key_map != list(range(len(texts))), pipeline_map != list(range(len(ids)))
    for chunk in kept:
        item = rows[chunk]
        keys = item["keys"]
        if keys_moved:
            keys = keys[:]
            keys[0::2] = map(key_map.__getitem__, keys[0::2])
        out["chunks"][chunk] = {"index": item["index"], "keys": keys,
                                "pipelines": list(map(pipeline_map.__getitem__, item["pipelines"]))
                                if pipelines_moved else item["pipelines"]}
    return out


def _counted(rows: Mapping[str, Any], kept: list[str], union_draws: list[int], pipelines: int):
    """Per key of the old tables its users and draws among the ``kept`` chunks (``union_draws``: its draws
    among every chunk of ``rows``), and per pipeline state its users; None when a row is not an index path,
    ``[key, draws, ...]`` and ``[pipeline, ...]`` positions inside those tables.  The kept rows are
    counted in C (their positions checked once per distinct position, not once per row); only the
    other rows are walked number by number."""
    keys, kept_set = len(union_draws), set(kept)
    draws = list(union_draws)
    try:
        for chunk, item in rows.items():
            row, states = item["keys"], item["pipelines"]
            if type(row) is not list or type(states) is not list or type(item["index"]) is not str \
                    or len(row) % 2 or not set(map(type, row)) <= {int} or min(row[1::2], default=0) < 0:
                return None
            if chunk in kept_set:
                continue
            if not set(map(type, states)) <= {int} or not _inside(row[0::2], keys) or not _inside(states, pipelines):
                return None
            for k, d in zip(row[0::2], row[1::2]):  # a chunk that changed or left: its draws leave the sums
                draws[k] -= d
        if any(chunk not in rows for chunk in kept):
            return None
        key_users = Counter(chain.from_iterable(rows[chunk]["keys"][0::2] for chunk in kept))
        state_users = Counter(chain.from_iterable(rows[chunk]["pipelines"] for chunk in kept))
    except (KeyError, TypeError):
        return None
    if not _inside(key_users, keys) or not _inside(state_users, pipelines) or any(d < 0 for d in draws):
        return None
    users, used = [0] * keys, [0] * pipelines
    for k, n in key_users.items():
        users[k] = n
    for p, n in state_users.items():
        used[p] = n
    return users, draws, used


def _inside(positions, size: int) -> bool:
    """Every one of ``positions`` (ints, or a Counter's keys) is a position in a table of ``size``."""
    return not positions or (all(type(p) is int for p in positions) and min(positions) >= 0 and max(positions) < size)
