"""What a cook changed and why, for the change block printed after it.

The keys a rewritten chunk manifest gained or lost (against the manifest it
replaced), the first key that needs each job, and for each compiled job the defines
that differ from the nearest job of the same source and stage the cache already held
(the changed input, rather than the whole define set).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pipeline.cook import manifest as mf
from pipeline.cook.jobs import JobPlan
from pipeline.cook.scheduler import RunResult

MAX_COMPARED = 5000  # cached jobs of one source and stage compared with each compiled job


def first_keys(keys, plan: JobPlan) -> dict[str, str]:
    """Job key -> the first key (by text) that needs the job."""
    first_key: dict[str, str] = {}
    for key in sorted(keys, key=lambda k: k.text):
        for job_key in plan.jobs_for(key).values():
            first_key.setdefault(job_key, key.text)
    return first_key


def define_changes(plan: JobPlan, run: RunResult) -> dict[str, dict[str, list]]:
    """For each compiled job, ``{define: [cached value, new value]}`` against the cached job of the
    same source and stage with the fewest differing defines (none cached: no entry)."""
    compiled = set(run.compiled)
    cached: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for job_key, job in plan.jobs.items():
        if job_key not in compiled and job_key in run.results:
            cached[(job.request.source, job.request.stage)].append(dict(job.request.defines))
    changes = {}
    for job_key in compiled:
        request = plan.jobs[job_key].request
        new = dict(request.defines)
        best = None
        for old in cached.get((request.source, request.stage), ())[:MAX_COMPARED]:
            diff = {n: [old.get(n), new.get(n)] for n in sorted(set(old) | set(new)) if old.get(n) != new.get(n)}
            if best is None or len(diff) < len(best):
                best = diff
        if best:
            changes[job_key] = best
    return changes


def manifest_keys(path: Path) -> set[str] | None:
    """The keys of the chunk manifest on disk (None when missing, unreadable or of another format)."""
    if not path.is_file():
        return None
    try:
        return set(mf.load_chunk_manifest(path).keys)
    except mf.ManifestError:
        return None


def record_key_changes(result, chunk: str, before: set[str] | None, now) -> None:
    """Add to a cook result the keys a rewritten chunk manifest gained and lost (``before``: the
    keys of the manifest it replaced, None when there was none)."""
    if before is None:
        result.new_chunks.append(chunk)
        before = set()
    now = set(now)
    result.keys_added += [(chunk, k) for k in sorted(now - before)]
    result.keys_removed += [(chunk, k) for k in sorted(before - now)]
