"""How many CPUs this process may use: the one answer behind every default worker count.

``os.cpu_count()`` counts the machine's CPUs, not the ones a container, a job
scheduler or ``taskset`` leaves to this process; starting that many workers
oversubscribes the allowed cores.  The CPUs it may run on: in order of preference
``os.process_cpu_count()`` (Python 3.13+, honours affinity on every platform),
``len(os.sched_getaffinity(0))`` (Linux and some BSDs), ``os.cpu_count()``.

A CPU quota (a container's ``--cpus``, a CI runner's limit) caps that: the
process's cgroup is found through ``/proc/self/cgroup`` and every level from it up
to the root is read (a parent's limit binds too).  cgroup v2: ``cpu.max`` holds
``<quota> <period>`` (``max``: no limit); cgroup v1: ``cpu.cfs_quota_us`` and
``cpu.cfs_period_us`` of the ``cpu`` controller (quota -1: no limit).  The count is
``min(CPUs, ceil(quota / period))``, at least 1.  Missing or unreadable files mean
no limit, never an error.
"""

from __future__ import annotations

import math
import os
import posixpath
from pathlib import Path

CGROUP_MOUNT = "sys/fs/cgroup"


def usable_cpus(root: Path | str = "/") -> int:
    """CPUs available to this process (at least 1); ``root`` is where ``/proc`` and ``/sys`` are read."""
    count = _cpus()
    limit = cgroup_cpu_limit(root)
    if limit is not None:
        count = min(count, limit)
    return max(1, count)


def _cpus() -> int:
    process_count = getattr(os, "process_cpu_count", None)
    if process_count is not None:
        count = process_count()
    elif hasattr(os, "sched_getaffinity"):
        try:
            count = len(os.sched_getaffinity(0))
        except OSError:
            count = os.cpu_count()
    else:
        count = os.cpu_count()
    return max(1, count or 1)


def cgroup_cpu_limit(root: Path | str = "/") -> int | None:
    """The tightest CPU quota over this process's cgroup and its ancestors, in whole CPUs; None: no limit."""
    root = Path(root)
    limits = []
    for line in _read(root / "proc" / "self" / "cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":  # cgroup v2
            limits += [_v2(folder) for folder in _levels(root / CGROUP_MOUNT, path)]
        elif "cpu" in controllers.split(","):  # cgroup v1, mounted as "cpu,cpuacct" or "cpu"
            for mount in dict.fromkeys((controllers, "cpu")):
                limits += [_v1(folder) for folder in _levels(root / CGROUP_MOUNT / mount, path)]
    found = [n for n in limits if n is not None]
    return min(found) if found else None


def _levels(base: Path, path: str) -> list[Path]:
    """The cgroup folder of ``path`` under ``base`` and every ancestor up to ``base`` itself."""
    parts = [p for p in posixpath.normpath("/" + path).split("/") if p and p != ".."]
    return [base.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="strict")
    except (OSError, ValueError):
        return ""


def _whole_cpus(quota: str, period: str) -> int | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return max(1, math.ceil(q / p)) if q > 0 and p > 0 else None


def _v2(folder: Path) -> int | None:
    fields = _read(folder / "cpu.max").split()
    return _whole_cpus(fields[0], fields[1]) if len(fields) == 2 and fields[0] != "max" else None


def _v1(folder: Path) -> int | None:
    return _whole_cpus(_read(folder / "cpu.cfs_quota_us").strip(), _read(folder / "cpu.cfs_period_us").strip())
