"""What the required keys cost in bytes and compile time.

Binary sizes: the distinct SPIR-V blobs each chunk's keys use (a blob shared by two
keys counts once per chunk, once per level, once in the total), raw and
compressed with zlib level 6 (about what a pak compressor gains).  When the cooked
output folder's shader library (``shaders.pak``) holds every blob the total counts,
the total's bytes are what ships: the library's size on disk (its blobs once, the
fallback keys' blobs, reflection and tables).  Compile time: the timing log's last
compile of every job the keys need, summed per job family.
"""

from __future__ import annotations

import os
import zlib
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cache.store import Store
from pipeline.outputs.pak import read_index
from pipeline.plan.jobs import JobPlan
from pipeline.cook.timings import latest_per_job, read_log

if TYPE_CHECKING:
    from pipeline.keys.required import KeysResult

ZLIB_LEVEL = 6
TOP_JOBS = 25


def key_blob_sizes(plan: JobPlan, states: dict, store: Store | None):
    """``key -> {blob digest: bytes}`` of its cooked stage blobs (None when the store has none of them)."""
    sizes: dict[str, int | None] = {}

    def of(key) -> dict | None:
        out = {}
        for job in plan.jobs_for(key).values():
            state = states.get(job)
            if store is None or state is None or not state.blob:
                continue
            if state.blob not in sizes:
                data = store.get_blob(state.blob)
                sizes[state.blob] = None if data is None else len(data)
            if sizes[state.blob] is not None:
                out[state.blob] = sizes[state.blob]
        return dict(sorted(out.items())) or None
    return of


def binary_sizes(found: "KeysResult", plan: JobPlan, states: dict, store: Store | None,
                 chunk_levels: dict[str, str], library: Path | None = None) -> dict | None:
    """``{"chunks": [...], "levels": [...], "total": {...}}`` with blobs, bytes, compressed; None uncooked.
    ``library``: the shader library of the cooked outputs; when it holds every blob of the total, the
    total's ``bytes`` are its size on disk and the total says so (``"library": true``)."""
    if store is None or not states:
        return None
    sizes: dict[str, tuple[int, int]] = {}

    def size(blob: str) -> tuple[int, int] | None:
        if blob not in sizes:
            data = store.get_blob(blob)
            if data is None:
                return None
            sizes[blob] = (len(data), len(zlib.compress(data, ZLIB_LEVEL)))
        return sizes[blob]

    per_chunk: dict[str, set[str]] = defaultdict(set)
    for chunk, required in found.by_chunk.items():
        for key in required.keys:
            for job in plan.jobs_for(key).values():
                state = states.get(job)
                if state is not None and state.blob and size(state.blob) is not None:
                    per_chunk[chunk].add(state.blob)
    if not sizes:
        return None
    per_level: dict[str, set[str]] = defaultdict(set)
    for chunk, blobs in per_chunk.items():
        per_level[chunk_levels.get(chunk, chunk)] |= blobs

    def row(name: str, blobs: set[str], **extra) -> dict:
        return {"name": name, **extra, "blobs": len(blobs), "bytes": sum(sizes[b][0] for b in blobs),
                "compressed": sum(sizes[b][1] for b in blobs)}

    everything = set().union(*per_chunk.values())
    total = row("total", everything)
    shipped = shipped_bytes(library, everything) if library is not None else None
    if shipped is not None:
        total.update(bytes=shipped, library=True)
    return {"compression": f"zlib level {ZLIB_LEVEL}, per blob",
            "chunks": [row(c, per_chunk[c], level=chunk_levels.get(c, c)) for c in sorted(per_chunk)],
            "levels": [row(lv, per_level[lv]) for lv in sorted(per_level)],
            "total": total}


def shipped_bytes(library: Path, blobs: set[str]) -> int | None:
    """The size on disk of the shader library at ``library`` when it reads as one and holds every blob of
    ``blobs``; None when it is missing, unreadable, or from another cook (a blob lacking)."""
    found = read_index(library)  # header, index and chunk table only: no blob is read
    if found is None or not blobs <= found[0]:
        return None
    try:
        return os.stat(library).st_size
    except OSError:
        return None


def compile_times(cache_dir, plan: JobPlan, first_keys: dict[str, str]) -> dict | None:
    """Per job (slowest first) and per family: the last logged compile time of the plan's jobs."""
    latest = latest_per_job(read_log(cache_dir))
    mine = {job: latest[job] for job in plan.jobs if job in latest}
    if not mine:
        return None
    families: dict[str, list[float]] = defaultdict(list)
    jobs = []
    for job, row in mine.items():
        request = plan.jobs[job].request
        key = first_keys.get(job) or row.get("key")
        family = key.split("/", 1)[0] if key else str(row.get("family"))
        families[family].append(float(row["seconds"]))
        jobs.append({"job": job[:12], "key": key, "family": family, "source": request.source,
                     "stage": request.stage, "seconds": round(float(row["seconds"]), 6), "cook": row["cook"]})
    jobs.sort(key=lambda j: (-j["seconds"], j["job"]))
    fam = [{"family": f, "jobs": len(s), "seconds": round(sum(s), 6), "max_seconds": round(max(s), 6)}
           for f, s in families.items()]
    fam.sort(key=lambda d: (-d["seconds"], d["family"]))
    return {"jobs_timed": len(mine), "jobs_planned": len(plan.jobs),
            "seconds": round(sum(j["seconds"] for j in jobs), 6), "families": fam, "slowest": jobs[:TOP_JOBS]}
