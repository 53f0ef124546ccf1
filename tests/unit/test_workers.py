"""Process pools that never outlive or hang their parent (pipeline.workers), in-process checks.

The end-to-end trials (Ctrl-C and kill -9 of a real cook) are in tests/e2e/test_reliability_processes.py.
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


def sigint_state(_: int) -> tuple[bool, bool]:
    """(ignored, blocked) for SIGINT in the calling process."""
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN, signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_workers_unblock_sigint_once_they_ignore_it_and_the_parent_mask_is_restored():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with process_pool(2) as pool:
        assert list(pool.map(sigint_state, range(4))) == [(True, False)] * 4
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


HALF_SENT = """
import struct, sys, time
from pipeline.workers import process_pool
try:
    with process_pool(1) as pool:
        pool.submit(time.sleep, 60)
        time.sleep(0.5)
        # what a worker killed in the middle of sending a result leaves in the pipe:
        # a length header and part of the message
        pool._result_queue._writer._send(struct.pack("!i", 1000) + b"x" * 10)
        time.sleep(0.5)  # the pool's reader thread now waits for the rest
        raise KeyboardInterrupt
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_a_result_cut_off_by_a_killed_worker_does_not_hang_the_exit():
    """Without the parent closing its end of the result pipe the interpreter's exit waits forever."""
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-c", HALF_SENT], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the process hung at exit after a worker was killed mid-result")
    assert (done.returncode, done.stdout) == (0, "interrupted\n"), done.stderr


LATE_CTRL_C = """
import os, signal, sys
from pipeline import interrupt

class SendsCtrlCWhileModulesAreTornDown:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)

interrupt.arm()
sys.modules["late"] = type(sys)("late")
sys.modules["late"].obj = SendsCtrlCWhileModulesAreTornDown()
print("done", flush=True)
if sys.argv[1] == "during-exit":
    interrupt.finishing()
    import atexit
    atexit.register(os.kill, os.getpid(), signal.SIGINT)   # runs before pipeline's own exit handler
    del sys.modules["late"].obj  # no teardown signal in this case
interrupt.finishing()
sys.exit(0)
"""


@pytest.mark.parametrize("case, expected", [("teardown", (0, "")), ("during-exit", (130, "pipeline: interrupted\n"))])
def test_a_ctrl_c_after_the_work_is_one_line_and_130_or_ignored_never_a_signal_death(case, expected):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LATE_CTRL_C, case], capture_output=True, text=True, timeout=60)
    assert done.stdout == "done\n"
    assert (done.returncode, done.stderr) == expected
