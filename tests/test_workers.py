"""Process pools that never outlive or hang their parent (pipeline.workers), in-process checks.

The end-to-end trials (Ctrl-C and kill -9 of a real cook) are in test_reliability_processes.py.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from pipeline.workers import process_pool


def sigint_handler(_: int) -> bool:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def worker_pid(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


@pytest.mark.parametrize("method", [m for m in ("fork", "spawn", "forkserver")
                                    if m in multiprocessing.get_all_start_methods()])
def test_pools_work_under_every_start_method_and_workers_ignore_sigint(method):
    with process_pool(2, mp_context=multiprocessing.get_context(method)) as pool:
        assert list(pool.map(sigint_handler, range(4))) == [True] * 4


def test_an_exception_in_the_parent_kills_the_workers_instead_of_waiting(tmp_path):
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), process_pool(2) as pool:
        pids = {pool.submit(worker_pid, 0.0).result()}
        pool.submit(worker_pid, 60.0)  # still running when the interrupt comes
        raise KeyboardInterrupt
    assert time.monotonic() - started < 30  # did not wait for the 60 s task
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
