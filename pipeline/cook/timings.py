"""The timing log: one line per compiled job of every cook, like ``.ninja_log``.

The log lives in the cache folder (``<cache>/timings.jsonl``), beside the records
whose compiles it times, so the outputs of a cook stay byte-identical from run to
run.  Each line is one JSON object::

    {"cook": "2026-01-01T12:00:00.000000Z", "job": "<job key>", "key": "<first key>", "key_hash": "<its hash>",
     "family": "pbr", "source": "pbr/pbr.frag", "stage": "fragment", "seconds": 0.0123, "ok": true}

A cook's lines are written together, under a lock on the log, so they stay
contiguous; the order of the cooks in the log is the order they finished.  The log
keeps the last :data:`MAX_COOKS` cooks and at most :data:`MAX_LINES` lines: when an
append would pass either, the log is rewritten with the cooks kept plus the new one
(temp file + rename, so a reader sees the old log or the new one).
``pipeline report --timings [--cooks N]`` and the HTML report read it
(:func:`read_log`, :func:`summarize`).
"""

from __future__ import annotations

import datetime as dt
import os
from collections import defaultdict
from pathlib import Path

import msgspec
import orjson

from pipeline.locks import exclusive
from pipeline.outputs.atomic import write_atomic

LOG_NAME = "timings.jsonl"
MAX_COOKS = 50
MAX_LINES = 200_000
SUMMARY_FORMAT = 1  # the layout version of TimingSummary.to_json ("format")
_PREFIX = b'{"cook":"'  # every line starts so (sorted keys): the cook is read without parsing the line


def log_path(cache_dir: Path | str) -> Path:
    return Path(cache_dir) / LOG_NAME


def cook_stamp() -> str:
    """The id of one cook in the log: its UTC start time."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def append_cook(cache_dir: Path | str, rows: list[dict]) -> Path | None:
    """Append one cook's rows, keeping the log within :data:`MAX_COOKS` cooks and :data:`MAX_LINES`
    lines; returns the log's path (None when there was nothing to log)."""
    if not rows:
        return None
    path = log_path(cache_dir)
    rows = rows[-MAX_LINES:]
    data = b"".join(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n" for row in rows)
    with exclusive(str(path) + ".lock"):
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = b""
        kept = _kept(old.splitlines(keepends=True), MAX_COOKS - 1, MAX_LINES - len(rows))
        if kept is None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), 0o666)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        else:
            write_atomic(path, b"".join(kept) + data)
    return path


def _kept(lines: list[bytes], cooks: int, max_lines: int) -> list[bytes] | None:
    """The whole cooks at the end of ``lines`` to keep (at most ``cooks`` cooks and ``max_lines``
    lines; unreadable lines dropped), or None when every line may stay."""
    ids = [_cook_of(line) for line in lines]
    if len(lines) <= max_lines and None not in ids and len(set(ids)) <= cooks:
        return None
    blocks: list[list[bytes]] = []  # each cook's lines, newest cook first
    last = None
    for line, cook in zip(reversed(lines), reversed(ids)):
        if cook is None:
            continue
        if cook != last:
            blocks.append([])
            last = cook
        blocks[-1].append(line)
    keep: list[bytes] = []
    for block in blocks[:max(cooks, 0)]:
        if len(keep) + len(block) > max_lines:
            break
        keep += block
    keep.reverse()
    return keep


def _cook_of(line: bytes) -> bytes | None:
    end = line.find(b'"', len(_PREFIX))
    return line[len(_PREFIX):end] if line.startswith(_PREFIX) and end > 0 and line.endswith(b"\n") else None


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


class TimingSummary(msgspec.Struct):
    """The compiles of the last ``len(cooks)`` cooks of the log: per job (runs, last, mean and max
    seconds; slowest by mean first) and per family; ``to_json()`` is ``report --timings --json``."""

    cooks: list[dict] = msgspec.field(default_factory=list)      # {"cook", "jobs", "seconds"} chosen, oldest first
    jobs: list[dict] = msgspec.field(default_factory=list)       # the slowest jobs (by mean), slowest first
    families: list[dict] = msgspec.field(default_factory=list)   # {"family", "jobs", "runs", "seconds", "max_seconds"}
    total_seconds: float = 0.0
    total_runs: int = 0
    cooks_logged: int = 0                                # cooks the log holds (at most MAX_COOKS)

    @property
    def cook(self) -> str | None:
        """The last cook shown (None: nothing was ever timed)."""
        return self.cooks[-1]["cook"] if self.cooks else None

    def to_json(self) -> dict:
        return {"format": SUMMARY_FORMAT, "cooks_logged": self.cooks_logged, "max_cooks": MAX_COOKS,
                "cooks": self.cooks, "total_runs": self.total_runs, "total_seconds": round(self.total_seconds, 6),
                "jobs": self.jobs, "families": self.families}


def summarize(rows: list[dict], top: int = 10, cooks: int = 1) -> TimingSummary:
    """The last ``cooks`` cooks of the log (in the order they were logged): the ``top`` jobs by mean
    time over their runs, with runs, last, mean and max, and every family's jobs, runs and time."""
    order = list(dict.fromkeys(str(r["cook"]) for r in rows))
    chosen = order[-cooks:] if cooks > 0 else []
    if not chosen:
        return TimingSummary(cooks_logged=len(order))
    wanted = set(chosen)
    mine = [r for r in rows if str(r["cook"]) in wanted]
    per_cook: dict[str, list[float]] = defaultdict(list)
    per_job: dict[str, list[dict]] = defaultdict(list)
    for r in mine:
        per_cook[str(r["cook"])].append(float(r["seconds"]))
        per_job[str(r.get("job"))].append(r)
    jobs = [_job_doc(runs) for runs in per_job.values()]
    jobs.sort(key=lambda j: (-j["mean_seconds"], str(j["job"])))
    families: dict[str, list[dict]] = defaultdict(list)
    for job in jobs:
        families[str(job["family"])].append(job)
    fam = [{"family": f, "jobs": len(js), "runs": sum(j["runs"] for j in js),
            "seconds": round(sum(j["total_seconds"] for j in js), 6),
            "max_seconds": round(max(j["max_seconds"] for j in js), 6)} for f, js in families.items()]
    fam.sort(key=lambda d: (-d["seconds"], d["family"]))
    return TimingSummary([{"cook": c, "jobs": len(per_cook[c]), "seconds": round(sum(per_cook[c]), 6)}
                          for c in chosen], jobs[:top], fam,
                         sum(float(r["seconds"]) for r in mine), len(mine), len(order))


def latest_per_job(rows: list[dict]) -> dict[str, dict]:
    """The last logged compile of every job (what the HTML report shows per job)."""
    latest: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: r["cook"]):
        latest[str(r.get("job"))] = r
    return latest


def _job_doc(runs: list[dict]) -> dict:
    """One job over its runs (in log order): the last run's key and outcome, runs, last/mean/max seconds."""
    last, times = runs[-1], [float(r["seconds"]) for r in runs]
    return {"job": last.get("job"), "key": last.get("key"), "key_hash": last.get("key_hash"),
            "family": last.get("family"), "source": last.get("source"), "stage": last.get("stage"),
            "runs": len(runs), "last_seconds": round(times[-1], 6), "mean_seconds": round(sum(times) / len(times), 6),
            "max_seconds": round(max(times), 6), "total_seconds": round(sum(times), 6), "ok": last.get("ok")}


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
