"""Which compile results recent cooks used: what ``pipeline cache gc`` keeps.

Records in the local store (JSON-able values, versioned):

- ``("useset", <id>)`` -> ``{"version": 1, "jobs": [<job key>, ...]}``: the job
  keys one cook used, sorted; ``<id>`` is the hash of that list
  (:func:`use_set_id`), so every cook of the same content
  shares one record, written once;
- ``("usetime", <id>)`` -> ``{"version": 1, "time": <unix seconds>}``: when a cook
  last used that set, rewritten by every cook (one small write per cook).

``gc`` keeps the ``"job"`` records named by a use set used within ``keep_days``
and the blobs those records name, and removes the other job records, blobs and
old use sets.  Other namespaces (scan facts, chunk records, output stats) are
small and left alone: what they point at is looked up again and rebuilt when
missing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pipeline.cache.store import Store
from pipeline.digest import bytes_hash

USES_VERSION = 1
USESET, USETIME = "useset", "usetime"


@dataclass
class TierStats:
    """What one tier holds (``pipeline cache stats``)."""

    location: str
    jobs: int = 0
    blobs: int = 0
    bytes: int = 0
    uses: int = 0
    last_use: float | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"location": self.location, "jobs": self.jobs, "blobs": self.blobs, "bytes": self.bytes,
                "uses": self.uses, "last_use": self.last_use, **self.extra}


@dataclass
class GcResult:
    """What ``gc`` removed from one tier, and what it kept."""

    location: str
    jobs_removed: int = 0
    blobs_removed: int = 0
    bytes_removed: int = 0
    uses_removed: int = 0
    jobs_kept: int = 0
    blobs_kept: int = 0
    dry_run: bool = False  # a read-only tier: what would be removed

    def to_json(self) -> dict:
        return dict(self.__dict__)


def use_set_id(job_keys) -> str:
    """The name of a use record: the hash of the sorted job keys."""
    return bytes_hash("\n".join(sorted(job_keys)).encode())


def record_use(store: Store, job_keys, now: float | None = None) -> str:
    """Record that a cook used these jobs now; returns the use set id."""
    keys = sorted(job_keys)
    ident = use_set_id(keys)
    if not _valid(store.get(USESET, ident)):
        store.set(USESET, ident, {"version": USES_VERSION, "jobs": keys})
    store.set(USETIME, ident, {"version": USES_VERSION, "time": time.time() if now is None else now})
    return ident


def _valid(record) -> bool:
    return isinstance(record, dict) and record.get("version") == USES_VERSION


def _use_times(store: Store) -> dict[str, float]:
    times = {}
    for ident in store.keys(USETIME):
        record = store.get(USETIME, ident)
        if _valid(record) and isinstance(record.get("time"), (int, float)):
            times[ident] = float(record["time"])
    return times


def stats(store: Store) -> TierStats:
    """What the local store holds: job records, blobs, bytes on disk, use sets."""
    times = _use_times(store)
    return TierStats(str(store.directory), jobs=len(store.keys("job")), blobs=len(store.keys("blob")),
                     bytes=store.volume(), uses=len(times), last_use=max(times.values(), default=None))


def gc(store: Store, keep_days: float, now: float | None = None) -> GcResult:
    """Remove job records and blobs that no cook of the last ``keep_days`` used."""
    now = time.time() if now is None else now
    cutoff = now - keep_days * 86400
    result = GcResult(str(store.directory))
    times = _use_times(store)
    keep: set[str] = set()
    for ident, used in times.items():
        record = store.get(USESET, ident)
        if used >= cutoff and _valid(record):
            keep.update(record.get("jobs", ()))
    referenced = set()
    for key in store.keys("job"):
        if key in keep:
            record = store.get("job", key)
            referenced.add(record.get("blob") if isinstance(record, dict) else None)
            result.jobs_kept += 1
        else:
            store.delete("job", key)
            result.jobs_removed += 1
    before = store.volume()
    for digest in store.keys("blob"):
        if digest in referenced:
            result.blobs_kept += 1
        else:
            store.delete("blob", digest)
            result.blobs_removed += 1
    result.bytes_removed = max(0, before - store.volume())
    for ident in set(store.keys(USESET)) | set(times):
        if times.get(ident, 0.0) < cutoff:
            store.delete(USESET, ident)
            store.delete(USETIME, ident)
            result.uses_removed += 1
    return result
