"""A level manifest brought up to date by replacing the parts of the chunks that changed.

A level manifest lists, per chunk, the keys (with draws) and pipeline states it uses, by
position in the union's tables (:mod:`pipeline.outputs.level_index`).  When one chunk of
a level of 250 is cooked again, rebuilding the union from every chunk's part decodes,
merges and encodes every chunk's rows: a cost that grows with the level.
:func:`updated_level` instead

- decodes only the union's tables (its keys, pipeline states and errors) of the
  document on disk,
- sums draws and counts users from the raw rows of the chunks that did not change,
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

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from pipeline.digest import sorted_unique
from pipeline.outputs import manifest as mf


def updated_level(doc: Mapping[str, Any], union: Mapping[str, Any], level: str, kept: Iterable[str],
                  parts: Iterable[Any]) -> dict | None:
    """The new document of a level whose manifest on disk is ``doc`` (its union's fields decoded:
    ``union``, :func:`pipeline.outputs.manifest.load_level_union`); ``kept``: the chunks whose rows in
    ``doc`` still hold; ``parts``: every other chunk of the level as it is now (a
    :class:`~pipeline.outputs.write_level.Part` or a chunk manifest).  ``None``: rebuild it whole."""
    rows = doc.get("chunks")
    if not isinstance(rows, dict) or any(e.get("message") == mf.STALE for e in union["errors"]):
        return None
    texts, ids = list(union["keys"]), list(union["pipelines"])
    kept = sorted(kept)
    counted = _counted(rows, kept, len(texts), len(ids))
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
    new = mf.LevelManifest(level, tuple(sorted([*kept, *(m.chunk for m in parts)])), merged,
                           tuple(sorted_unique(errors)), dict(sorted(pipelines.items())),
                           {m.chunk: (dict(getattr(m, "counts", None) or {t: e.draws for t, e in m.keys.items()}),
                                      tuple(sorted(m.pipelines))) for m in parts})
    out = new.to_json()
    key_at, pipeline_at = {t: i for i, t in enumerate(merged)}, {p: i for i, p in enumerate(new.pipelines)}
    key_map = [key_at.get(t, -1) for t in texts]
    pipeline_map = [pipeline_at.get(p, -1) for p in ids]
    # an edit seldom adds or drops a key or pipeline state of its level: then no position moves and
    # the rows are carried as they are
    keys_moved, pipelines_moved = key_map != list(range(len(texts))), pipeline_map != list(range(len(ids)))
    for chunk in kept:
        item = rows[chunk]
        out["chunks"][chunk] = {"index": new.index_path(chunk),
                                "keys": [[key_map[k], d] for k, d in item["keys"]] if keys_moved else item["keys"],
                                "pipelines": [pipeline_map[p] for p in item["pipelines"]] if pipelines_moved
                                else item["pipelines"]}
    return out


def _counted(rows: Mapping[str, Any], kept: list[str], keys: int, pipelines: int):
    """Per key of the old tables its users and draws among the ``kept`` chunks, and per pipeline state
    its users; None when a kept chunk's rows are not ``[[key, draws], ...]`` and ``[pipeline, ...]``
    positions inside those tables."""
    users, draws, used = [0] * keys, [0] * keys, [0] * pipelines
    try:
        for chunk in kept:
            item = rows[chunk]
            for k, d in item["keys"]:
                users[k] += 1
                draws[k] += d
            for p in item["pipelines"]:
                used[p] += 1
            if (item["keys"] and min(k for k, _ in item["keys"]) < 0) \
                    or (item["pipelines"] and min(item["pipelines"]) < 0):
                return None
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    if not all(type(d) is int for d in draws):
        return None
    return users, draws, used

