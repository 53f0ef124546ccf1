"""A level manifest brought up to date by replacing the parts of the chunks that changed.

A level manifest lists, per chunk, the keys (with draws) and pipeline states it uses, by
position in the union's tables (:mod:`pipeline.outputs.level_index`).  When one chunk of
a level of 250 is cooked again, rebuilding the union from every chunk's part decodes,
merges and encodes every chunk's rows: a cost that grows with the level.
:func:`level_update` (and :func:`updated_level`, the document alone) instead

- decodes only the union's tables (its keys, pipeline states and errors) of the
  document on disk,
- finds how many of the chunks that did not change use each key and pipeline state: the
  users the cook recorded for the document, less the rows of the chunks that changed or left
  (without such a record, counted in C from every row's flat integer list), and takes their
  draws as the union's less those rows: only those rows are read one number at a time,
- adds the parts of the chunks that did (built this cook, or read again), drops the
  chunks that left,
- encodes the new tables and carries every unchanged chunk's rows over: as the JSON text
  they were written as when no position they name moves, else parsed and each position
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
from itertools import chain
from typing import Any

import orjson

from pipeline.digest import sorted_unique
from pipeline.outputs import manifest as mf
from pipeline.structs import replace

# per position of a level manifest's ``keys`` and of its ``pipelines``, the rows that name it
Users = tuple[list[int], list[int]]


def updated_level(doc: Mapping[str, Any], union: Mapping[str, Any], level: str, kept: Iterable[str],
                  parts: Iterable[Any]) -> dict | None:
    """The new document of a level whose manifest on disk is ``doc`` (its union's fields decoded:
    ``union``, :func:`pipeline.outputs.manifest.load_level_union`); ``kept``: the chunks whose rows in
    ``doc`` still hold; ``parts``: every other chunk of the level as it is now (a
    :class:`~pipeline.outputs.write_level.Part` or a chunk manifest).  ``None``: rebuild it whole."""
    made = level_update(doc, union, level, kept, parts)
    return None if made is None else made[0]


def level_update(doc: Mapping[str, Any], union: Mapping[str, Any], level: str, kept: Iterable[str],
                 parts: Iterable[Any], users: Any = None) -> tuple[dict, Users] | None:
    """:func:`updated_level`, with the new document's users (per position of its ``keys`` and of its
    ``pipelines``, the chunk rows that name it: what the cook records beside it).  A row of ``doc`` may be left
    raw (``msgspec.Raw``, :func:`pipeline.outputs.manifest.load_level_union` with ``raw_rows``).

    The kept chunks' draws are the union's less the rows of the chunks that are not kept (the
    union's draws are the sums of every row of the document this cook's record names), so only
    those rows are read one by one.  ``users``: those of ``doc`` as recorded when it was written;
    with them the kept rows are not even parsed, unless a position moves (they are carried as
    they are written); without them they are parsed, checked and counted."""
    rows = doc.get("chunks")
    if not isinstance(rows, dict) or any(e.get("message") == mf.STALE for e in union["errors"]):
        return None
    texts, ids = list(union["keys"]), list(union["pipelines"])
    kept = sorted(kept)
    if any(chunk not in rows for chunk in kept):
        return None
    union_draws = [union["keys"][t].draws for t in texts]
    counted = _from_users(rows, kept, union_draws, users, len(ids)) if _fits(users, len(texts), len(ids)) \
        else _counted(rows, kept, union_draws, len(ids))
    if counted is None:
        return None
    key_users, draws, state_users, carried = counted
    base = {texts[i]: union["keys"][texts[i]] for i in range(len(texts)) if key_users[i]}
    sums = {texts[i]: draws[i] for i in range(len(texts)) if key_users[i]}
    pipelines = {ids[j]: union["pipelines"][ids[j]] for j in range(len(ids)) if state_users[j]}
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
    # (positions only the chunks not kept named may go: the kept rows do not name them)
    keys_moved = any(key_map[i] != i for i in range(len(texts)) if key_users[i])
    pipelines_moved = any(pipeline_map[j] != j for j in range(len(ids)) if state_users[j])
    if (keys_moved or pipelines_moved) and not all(isinstance(carried[c], dict) for c in kept):
        carried = _parsed(carried, len(texts), len(ids))  # raw rows whose positions move: read after all
        if carried is None:
            return None
    for chunk in kept:
        item = carried[chunk]
        if not isinstance(item, dict):  # raw, as this module wrote it, and no position moved
            out["chunks"][chunk] = orjson.Fragment(bytes(item))
            continue
        keys = item["keys"]
        if keys_moved:
            keys = keys[:]
            keys[0::2] = map(key_map.__getitem__, keys[0::2])
        out["chunks"][chunk] = {"index": item["index"], "keys": keys,
                                "pipelines": list(map(pipeline_map.__getitem__, item["pipelines"]))
                                if pipelines_moved else item["pipelines"]}
    new_keys, new_states = [0] * len(merged), [0] * len(new.pipelines)
    for i in range(len(texts)):
        if key_users[i]:
            new_keys[key_map[i]] += key_users[i]
    for j in range(len(ids)):
        if state_users[j]:
            new_states[pipeline_map[j]] += state_users[j]
    for m in parts:  # their rows as just encoded
        row = out["chunks"][m.chunk]
        for k in row["keys"][0::2]:
            new_keys[k] += 1
        for p in row["pipelines"]:
            new_states[p] += 1
    return out, (new_keys, new_states)


def _fits(users: Any, keys: int, pipelines: int) -> bool:
    """``users`` is a recorded :data:`Users` for tables of these sizes."""
    return isinstance(users, (list, tuple)) and len(users) == 2 \
        and all(isinstance(u, (list, tuple)) and set(map(type, u)) <= {int} and min(u, default=0) >= 0
                for u in users) \
        and (len(users[0]), len(users[1])) == (keys, pipelines)


def _row(value: Any, checked: bool = True) -> dict | None:
    """A chunk's row (parsed when raw) when it is shaped as this module writes it: an index path,
    ``[key, draws, ...]`` and ``[pipeline, ...]``, and (``checked``) every number an integer, draws >= 0
    (positions are the caller's to check); else None."""
    if not isinstance(value, dict):
        try:
            value = orjson.loads(value) if isinstance(value, (bytes, str)) else orjson.loads(memoryview(value))
        except (TypeError, orjson.JSONDecodeError):
            return None
        if not isinstance(value, dict):
            return None
    row, states = value.get("keys"), value.get("pipelines")
    if type(row) is not list or type(states) is not list or type(value.get("index")) is not str or len(row) % 2:
        return None
    if checked and (not set(map(type, row)) <= {int} or not set(map(type, states)) <= {int}
                    or min(row[1::2], default=0) < 0):
        return None
    return value


def _from_users(rows: Mapping[str, Any], kept: list[str], union_draws: list[int], users: Users, pipelines: int):
    """:func:`_counted` from the users recorded for ``rows``: only the rows of chunks not ``kept`` are read
    (their draws and users leave the sums); the kept ones are handed on as they are."""
    key_users, state_users, draws = list(users[0]), list(users[1]), list(union_draws)
    for chunk in set(rows).difference(kept):
        item = _row(rows[chunk])
        if item is None or not _inside(item["keys"][0::2], len(draws)) or not _inside(item["pipelines"], pipelines):
            return None
        row = item["keys"]
        for k, d in zip(row[0::2], row[1::2]):
            draws[k] -= d
            key_users[k] -= 1
        for p in item["pipelines"]:
            state_users[p] -= 1
    if min(key_users, default=0) < 0 or min(state_users, default=0) < 0 or min(draws, default=0) < 0:
        return None
    return key_users, draws, state_users, {chunk: rows[chunk] for chunk in kept}


def _counted(rows: Mapping[str, Any], kept: list[str], union_draws: list[int], pipelines: int):
    """Per key of the old tables the ``kept`` chunks that use it and its draws among them (``union_draws``:
    its draws among every chunk of ``rows``), per pipeline state the kept chunks that use it, and the kept
    rows, parsed; None when a row is not an index path, ``[key, draws, ...]`` and ``[pipeline, ...]``
    positions inside those tables.  The kept rows are counted in C (their positions checked once per
    distinct position, not once per row); only the other rows are walked number by number."""
    keys, kept_set = len(union_draws), set(kept)
    draws = list(union_draws)
    parsed = {}
    for chunk, value in rows.items():
        item = _row(value)
        if item is None:
            return None
        if chunk in kept_set:
            parsed[chunk] = item
            continue
        row = item["keys"]
        if not _inside(row[0::2], keys) or not _inside(item["pipelines"], pipelines):
            return None
        for k, d in zip(row[0::2], row[1::2]):  # a chunk that changed or left: its draws leave the sums
            draws[k] -= d
    key_users = Counter(chain.from_iterable(parsed[chunk]["keys"][0::2] for chunk in kept))
    state_users = Counter(chain.from_iterable(parsed[chunk]["pipelines"] for chunk in kept))
    if not _inside(key_users, keys) or not _inside(state_users, pipelines) or min(draws, default=0) < 0:
        return None
    users, used = [0] * keys, [0] * pipelines
    for k, n in key_users.items():
        users[k] = n
    for p, n in state_users.items():
        used[p] = n
    return users, draws, used, parsed


def _parsed(carried: Mapping[str, Any], keys: int, pipelines: int) -> dict | None:
    """The kept rows, parsed, or None.  They are those of the document the recorded users were counted
    on (the file's stamp is the recorded one), written by this module: only their shape and the
    positions they name are checked (a position outside its table would map to another one)."""
    parsed = {chunk: _row(value, checked=False) for chunk, value in carried.items()}
    if any(item is None for item in parsed.values()):
        return None
    if not _inside(set(chain.from_iterable(item["keys"][0::2] for item in parsed.values())), keys) \
            or not _inside(set(chain.from_iterable(item["pipelines"] for item in parsed.values())), pipelines):
        return None
    return parsed


def _inside(positions, size: int) -> bool:
    """Every one of ``positions`` (ints, a set or a Counter's keys) is a position in a table of ``size``."""
    return not positions or (all(type(p) is int for p in positions) and min(positions) >= 0 and max(positions) < size)
