"""How many CPUs this process may use: the one answer behind every default worker count.

``os.cpu_count()`` counts the machine's CPUs, not the ones a container, a job
scheduler or ``taskset`` leaves to this process; starting that many workers
oversubscribes the allowed cores.  In order of preference:
``os.process_cpu_count()`` (Python 3.13+, honours affinity on every platform),
``len(os.sched_getaffinity(0))`` (Linux and some BSDs), ``os.cpu_count()``.
"""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """CPUs available to this process (at least 1)."""
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
