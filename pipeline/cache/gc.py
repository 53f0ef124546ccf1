"""What each cache tier holds, and removing what no recent cook used (``pipeline cache stats|gc``).

The local store: ``gc`` keeps the job records named by a use set used within
``keep_days`` (:mod:`pipeline.cache.use_records`) and the blobs those records name,
and removes the other job records, blobs and old use sets.  Other record kinds
(scan facts, chunk records, output stats) are small and left alone: what they
point at is looked up again and rebuilt when missing.  The shared tier's gc is
:meth:`pipeline.cache.remote.RemoteCache.gc`, with the same rule.
"""

from __future__ import annotations

import time

import msgspec

from pipeline.cache.job_records import JOB
from pipeline.cache.store import Store
from pipeline.cache.use_records import USE_SET, USE_TIME, use_times, used_jobs


class TierStats(msgspec.Struct):
    """What one tier holds; ``bytes``: on disk (local) or the blobs' sizes (shared)."""

    location: str
    jobs: int = 0
    blobs: int = 0
    bytes: int = 0
    uses: int = 0
    last_use: float | None = None
    extra: dict = msgspec.field(default_factory=dict)

    def to_json(self) -> dict:
        return {"location": self.location, "jobs": self.jobs, "blobs": self.blobs, "bytes": self.bytes,
                "uses": self.uses, "last_use": self.last_use, **self.extra}


class GcResult(msgspec.Struct):
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
        return msgspec.structs.asdict(self)


class CacheReport(msgspec.Struct):
    """``pipeline cache stats`` / ``gc``: one entry per tier (``remote`` None without a shared cache)."""

    local: TierStats | GcResult
    remote: TierStats | GcResult | None = None
    keep_days: float | None = None

    def to_json(self) -> dict:
        doc = {"local": self.local.to_json(), "remote": self.remote.to_json() if self.remote is not None else None}
        return doc if self.keep_days is None else {"keep_days": self.keep_days, **doc}


def stats(store: Store) -> TierStats:
    """What the local store holds: job records, blobs, bytes on disk, use sets."""
    times = use_times(store)
    return TierStats(str(store.directory), jobs=len(store.keys(JOB)), blobs=len(store.keys("blob")),
                     bytes=store.volume(), uses=len(times), last_use=max(times.values(), default=None))


def gc(store: Store, keep_days: float, now: float | None = None) -> GcResult:
    """Remove job records and blobs that no cook of the last ``keep_days`` used."""
    now = time.time() if now is None else now
    cutoff = now - keep_days * 86400
    result = GcResult(str(store.directory))
    keep = used_jobs(store, cutoff)
    referenced = set()
    for key in store.keys(JOB):
        if key in keep:
            record = store.get(JOB, key)
            referenced.add(record.get("blob") if isinstance(record, dict) else None)
            result.jobs_kept += 1
        else:
            store.delete(JOB, key)
            result.jobs_removed += 1
    before = store.volume()
    for digest in store.keys("blob"):
        if digest in referenced:
            result.blobs_kept += 1
        else:
            store.delete_blob(digest)
            result.blobs_removed += 1
    result.bytes_removed = max(0, before - store.volume())
    times = use_times(store)
    for ident in set(store.keys(USE_SET)) | set(times):
        if times.get(ident, 0.0) < cutoff:
            store.delete(USE_SET, ident)
            store.delete(USE_TIME, ident)
            result.uses_removed += 1
    return result
