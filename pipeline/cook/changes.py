"""What a cook changed and why, for the change block printed after it.

The keys a rewritten chunk manifest gained or lost (against the manifest it
replaced), the first key that needs each job, and for each compiled job the defines
that differ from the nearest job of the same source and stage the cache already held
(the changed input, rather than the whole define set).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

from pipeline.plan.jobs import JobPlan
from pipeline.compile.scheduler import RunResult

MAX_COMPARED = 5000  # cached jobs of one source and stage compared with each compiled job


def first_keys(keys, plan: JobPlan) -> dict[str, tuple[str, str]]:
    """Job key -> (text, hash) of the first key (by text) that needs the job."""
    first_key: dict[str, tuple[str, str]] = {}
    for key in sorted(keys, key=lambda k: k.text):
        for job_key in plan.all_jobs_for(key):
            if job_key not in first_key:
                first_key[job_key] = (key.text, key.hash)
    return first_key


def define_changes(plan: JobPlan, run: RunResult) -> dict[str, dict[str, list]]:
    """For each compiled job, ``{define: [cached value, new value]}`` against the cached job of the
    same source and stage with the fewest differing defines (none cached: no entry).  The defines that
    differ are counted as sets of (name, value) pairs; only the nearest job's difference is spelled out."""
    compiled = set(run.compiled)
    cached: dict[tuple[str, str], list[frozenset]] = defaultdict(list)
    for job_key, job in plan.jobs.items():
        if job_key not in compiled and job_key in run.results:
            cached[(job.request.source, job.request.stage)].append(frozenset(job.request.defines))
    changes = {}
    for job_key in compiled:
        request = plan.jobs[job_key].request
        pairs = frozenset(request.defines)
        nearest, fewest = None, None
        for old in cached.get((request.source, request.stage), ())[:MAX_COMPARED]:
            differ = len({name for name, _ in pairs ^ old})
            if fewest is None or differ < fewest:
                nearest, fewest = old, differ
        if fewest:
            before, now = dict(nearest), dict(pairs)
            changes[job_key] = {n: [before.get(n), now.get(n)] for n in sorted(before.keys() | now.keys())
                                if before.get(n) != now.get(n)}
    return changes


class KeysAdded(Sequence):
    """The keys rewritten chunk manifests gained, in order, each ``{chunk, key, hash, nearest}``.

    A chunk cooked for the first time gains every key it has, with nothing to be nearest to: it is
    held as its manifest's entries (key text -> entry, which the cook holds anyway) and its items
    are made when read, so a cold cook of a large world holds nothing per key and chunk for it
    (as dicts, about 60 MB at 100,000 files; as (key, hash) pairs, about 20 MB)."""

    def __init__(self, items: Sequence[dict] = ()) -> None:
        self._parts: list = [dict(item) for item in items]  # an item, or (chunk, {key text: entry})
        self._len = len(self._parts)

    def append(self, item: dict) -> None:
        self._parts.append(item)
        self._len += 1

    def add_chunk(self, chunk: str, entries: Mapping) -> None:
        """Every key of a chunk cooked for the first time (``entries``: key text -> its manifest entry)."""
        if entries:
            self._parts.append((chunk, entries))
            self._len += len(entries)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[dict]:
        for part in self._parts:
            if isinstance(part, dict):
                yield part
            else:
                chunk, entries = part
                yield from ({"chunk": chunk, "key": text, "hash": entries[text].hash, "nearest": None}
                            for text in sorted(entries))

    def __getitem__(self, at):
        return list(self)[at]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (list, KeysAdded)) and len(other) == len(self) and list(self) == list(other)

    def __add__(self, other: Sequence) -> list:
        return [*self, *other]

    def __repr__(self) -> str:
        return f"KeysAdded({list(self)!r})"


def record_key_changes(result, chunk: str, before: dict[str, str] | None, now: dict) -> None:
    """Add to a cook result (its ``keys_added`` a :class:`KeysAdded`) the keys a rewritten chunk manifest
    gained and lost (``before``: the keys of the manifest it replaced, None when there was none; ``now``:
    its manifest entries).
    An added key carries the nearest key it had before (same shader and pass, fewest features
    differing) and those differences: the input that changed."""
    if before is None:  # a chunk cooked for the first time: its keys, with nothing to be nearest to
        result.new_chunks.append(chunk)
        result.keys_added.add_chunk(chunk, now)
        return
    gone, split = [k for k in before if k not in now], {}  # each key split once, however many were added
    for text in sorted(set(now) - set(before)):
        near = nearest(text, gone, split)
        near = near if near is not None else nearest(text, list(before), split)
        result.keys_added.append({"chunk": chunk, "key": text, "hash": now[text].hash,
                                  "nearest": None if near is None else
                                  {"key": near, "hash": before[near], "changed": feature_changes(near, text)}})
    result.keys_removed += [{"chunk": chunk, "key": text, "hash": before[text]}
                            for text in sorted(set(before) - set(now))]


def split_key(text: str) -> tuple[str, dict[str, str]]:
    """``pbr/forward{A=1,B=0}`` -> ``("pbr/forward", {"A": "1", "B": "0"})``."""
    head, _, body = text.partition("{")
    pairs = [p.split("=", 1) for p in body.rstrip("}").split(",") if "=" in p]
    return head, dict(pairs)


def nearest(key: str, candidates: list[str], split: dict | None = None) -> str | None:
    """The candidate of the same shader and pass with the fewest features differing (ties: first by text).
    ``split``: keys split so far (:func:`split_key`), kept by a caller that asks for many."""
    split = {} if split is None else split
    head, features = split_key(key)
    best, best_n = None, None
    for other in sorted(candidates)[:MAX_COMPARED]:
        found = split.get(other)
        other_head, other_features = found if found is not None else split.setdefault(other, split_key(other))
        if other_head != head:
            continue
        n = len({f for f, _ in features.items() ^ other_features.items()})
        if best_n is None or n < best_n:
            best, best_n = other, n
    return best


def feature_changes(old: str, new: str) -> dict[str, list]:
    """``{feature: [old value, new value]}`` for the features that differ (None: absent)."""
    a, b = split_key(old)[1], split_key(new)[1]
    return {f: [a.get(f), b.get(f)] for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)}
