"""Use records: which compile results a cook used, and when (what ``pipeline cache gc`` keeps).

``useset:<id>`` (version 1): the job keys one cook used, sorted; ``<id>`` is the
SHA-256 of those keys joined by newlines (:func:`use_set_id`), so every cook of the
same content shares one record, written once::

    {"jobs": ["<job key>", ...]}

``usetime:<id>`` (version 1): when a cook last used that set, rewritten by every
cook (one small write per cook)::

    {"time": <unix seconds>}

The shared cache tier keeps the same information in its own layout
(:mod:`pipeline.cache.remote`, ``v1/uses/``).
"""

from __future__ import annotations

import time

from pipeline.cache.store import RecordKind, Store
from pipeline.digest import bytes_hash

USE_SET = RecordKind("useset", 1)
USE_TIME = RecordKind("usetime", 1)


def use_set_id(job_keys) -> str:
    """The name of a use set: the hash of its sorted job keys."""
    return bytes_hash("\n".join(sorted(job_keys)).encode())


def record_use(store: Store, job_keys, now: float | None = None) -> str:
    """Record that a cook used these jobs now; returns the use set id."""
    keys = sorted(job_keys)
    ident = use_set_id(keys)
    if store.get(USE_SET, ident) is None:
        store.set(USE_SET, ident, {"jobs": keys})
    store.set(USE_TIME, ident, {"time": time.time() if now is None else now})
    return ident


def use_times(store: Store) -> dict[str, float]:
    """When each use set was last used (unix seconds)."""
    times = {}
    for ident in store.keys(USE_TIME):
        record = store.get(USE_TIME, ident)
        if isinstance(record, dict) and isinstance(record.get("time"), (int, float)):
            times[ident] = float(record["time"])
    return times


def used_jobs(store: Store, since: float) -> set[str]:
    """Every job key a use set used at or after ``since`` names."""
    keep: set[str] = set()
    for ident, used in use_times(store).items():
        record = store.get(USE_SET, ident)
        if used >= since and isinstance(record, dict):
            keep.update(record.get("jobs", ()))
    return keep
