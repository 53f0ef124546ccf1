"""The timing log: one line per compiled job of every cook, like ``.ninja_log``.

The log lives in the cache folder (``<cache>/timings.jsonl``), beside the records
whose compiles it times, so the outputs of a cook stay byte-identical from run to
run.  Each line is one JSON object::

    {"cook": "2026-01-01T12:00:00.000000Z", "job": "<job key>", "key": "<first key>", "key_hash": "<its hash>",
     "family": "pbr", "source": "pbr/pbr.frag", "stage": "fragment", "seconds": 0.0123, "ok": true}

A cook appends its lines in one write; the log keeps the most recent
:data:`MAX_LINES` lines.  ``pipeline report --timings`` and the HTML report read it
(:func:`read_log`, :func:`summarize`).
"""

from __future__ import annotations

import datetime as dt
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from filelock import FileLock

from pipeline.cook.atomic import write_atomic

LOG_NAME = "timings.jsonl"
MAX_LINES = 200_000


def log_path(cache_dir: Path | str) -> Path:
    return Path(cache_dir) / LOG_NAME


def cook_stamp() -> str:
    """The id of one cook in the log: its UTC start time."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def append_cook(cache_dir: Path | str, rows: list[dict]) -> Path | None:
    """Append one cook's rows; returns the log's path (None when there was nothing to log)."""
    if not rows:
        return None
    path = log_path(cache_dir)
    data = b"".join(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n" for row in rows)
    with FileLock(str(path) + ".lock"):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), 0o666)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        _trim(path)
    return path


def _trim(path: Path) -> None:
    if path.stat().st_size < MAX_LINES * 120:  # cheap check before counting lines
        return
    lines = path.read_bytes().splitlines(keepends=True)
    if len(lines) > MAX_LINES:
        write_atomic(path, b"".join(lines[-MAX_LINES:]))


def read_log(cache_dir: Path | str) -> list[dict]:
    """Every readable row of the log (a torn or foreign line is skipped)."""
    try:
        raw = log_path(cache_dir).read_bytes()
    except OSError:
        return []
    rows = []
    for line in raw.splitlines():
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("seconds"), (int, float)) and "cook" in row:
            rows.append(row)
    return rows


@dataclass
class TimingSummary:
    """The slowest jobs and families of one cook (the latest by default)."""

    cook: str | None
    jobs: list[dict] = field(default_factory=list)       # slowest first
    families: list[dict] = field(default_factory=list)   # {"family", "jobs", "seconds"}, slowest first
    total_seconds: float = 0.0
    total_jobs: int = 0
    cooks: int = 0

    def to_json(self) -> dict:
        return {"cook": self.cook, "cooks": self.cooks, "total_jobs": self.total_jobs,
                "total_seconds": round(self.total_seconds, 6), "jobs": self.jobs, "families": self.families}


def summarize(rows: list[dict], top: int = 10, cook: str | None = None) -> TimingSummary:
    """Slowest ``top`` jobs and every family's total for ``cook`` (default: the last cook logged)."""
    cooks = sorted({r["cook"] for r in rows})
    if not cooks:
        return TimingSummary(None)
    chosen = cook or cooks[-1]
    mine = [r for r in rows if r["cook"] == chosen]
    families: dict[str, list[float]] = defaultdict(list)
    for r in mine:
        families[str(r.get("family"))].append(float(r["seconds"]))
    jobs = sorted(mine, key=lambda r: (-float(r["seconds"]), str(r.get("job"))))[:top]
    fam = [{"family": f, "jobs": len(s), "seconds": round(sum(s), 6), "max_seconds": round(max(s), 6)}
           for f, s in families.items()]
    fam.sort(key=lambda d: (-d["seconds"], d["family"]))
    return TimingSummary(chosen, [_job_doc(r) for r in jobs], fam,
                         sum(float(r["seconds"]) for r in mine), len(mine), len(cooks))


def latest_per_job(rows: list[dict]) -> dict[str, dict]:
    """The last logged compile of every job (what the HTML report shows per job)."""
    latest: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: r["cook"]):
        latest[str(r.get("job"))] = r
    return latest


def _job_doc(r: dict) -> dict:
    return {"job": r.get("job"), "key": r.get("key"), "key_hash": r.get("key_hash"), "family": r.get("family"), "source": r.get("source"),
            "stage": r.get("stage"), "seconds": round(float(r["seconds"]), 6), "ok": r.get("ok")}


def timing_rows(stamp: str, result) -> list[dict]:
    """The log lines of one cook (a :class:`pipeline.cook.run.CookResult`): one per compiled job."""
    rows = []
    for job_key in result.run.compiled:
        request = result.plan.jobs[job_key].request
        key = result.first_keys.get(job_key)
        job = result.run.results.get(job_key)
        rows.append({"cook": stamp, "job": job_key, "key": key, "key_hash": result.first_hashes.get(job_key),
                     "family": key.split("/", 1)[0] if key else None,
                     "source": request.source, "stage": request.stage,
                     "seconds": round(result.run.seconds.get(job_key, 0.0), 6), "ok": bool(job and job.ok)})
    return rows
