"""Preprocessing a plan's jobs ahead, on a pool of forked workers.

A cold plan preprocesses every job no ``job-exact`` record knows (:class:`~pipeline.plan.jobs.Planner`):
a few hundred to thousands of glslang preprocessor runs of a millisecond or two each, in the
cook's one process, between scanning and compiling.  :func:`preprocess_ahead` hands them to
forked workers first (glslang is loaded here, before the fork, so each worker inherits it)
and tells the planner each exact key; the keys are then added in their order as always, so the
plan (its jobs, merges and ``preprocessed``) is the same as one planned in this process alone.
Too few jobs for a pool, no fork, or a pool that breaks: the planner preprocesses what is left
as it adds the keys.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Sequence

from pipeline.keys.key import PermutationKey
from pipeline.plan.jobs import Planner, StageJob
from pipeline.heap import frozen
from pipeline.workers import fork_context, process_pool

MIN_JOBS = 64  # fewer jobs than this are preprocessed faster than a pool starts
TASKS_PER_WORKER = 4  # tasks per worker: one slow job does not hold a worker's whole share

_WORK: tuple[Planner, list[StageJob]] | None = None  # set before the fork, read by the workers


def preprocess_ahead(planner: Planner, keys: Sequence[PermutationKey], workers: int) -> int:
    """Preprocess the jobs of ``keys`` that ``planner`` would, on ``workers`` forked processes; the number
    of jobs preprocessed there."""
    global _WORK
    if workers < 2:
        return 0
    jobs = planner.unknown_jobs(keys)
    if len(jobs) < MIN_JOBS:
        return 0
    context = fork_context()
    if context is None or not planner.load_preprocessor():
        return 0
    tasks = min(len(jobs), workers * TASKS_PER_WORKER)
    done = 0
    _WORK = (planner, jobs)
    try:
        with frozen(), process_pool(min(workers, tasks), mp_context=context) as pool:
            futures = [pool.submit(_task, range(start, len(jobs), tasks)) for start in range(tasks)]
            for future in futures:
                for define_key, exact in future.result():
                    planner.learn(define_key, exact)
                    done += 1
    except (cf.BrokenExecutor, OSError):  # what was not learned is preprocessed as the keys are added
        pass
    finally:
        _WORK = None
    return done


def _task(indexes: range) -> list[tuple[str, str | None]]:
    """In a worker: (define-based key, exact key or None) of each job."""
    planner, jobs = _WORK
    return [(jobs[i].key, planner.exact_of(jobs[i])) for i in indexes]
