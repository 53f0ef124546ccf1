"""A Ctrl-C after the work is done: exit 130 at once with one line, only in the armed ``pipeline`` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from pipeline.interrupt import EXIT_INTERRUPTED

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends POSIX signals to a child process")


def python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60, env=env)


def test_exit_code_is_128_plus_sigint() -> None:
    assert EXIT_INTERRUPTED == 128 + signal.SIGINT


def test_an_armed_process_exits_130_with_its_output_flushed() -> None:
    run = python("""
        import os, signal, sys
        from pipeline import interrupt
        interrupt.arm()
        sys.stdout.write("work done")  # buffered: still unwritten when the signal lands
        interrupt.finishing()
        os.kill(os.getpid(), signal.SIGINT)
        print("not reached")
    """)
    assert run.returncode == EXIT_INTERRUPTED
    assert run.stdout == "work done"
    assert run.stderr == "pipeline: interrupted\n"


def test_finishing_does_nothing_unless_armed() -> None:
    run = python("""
        import os, signal
        from pipeline import interrupt
        interrupt.finishing()
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            print("the caller's own handler")
    """)
    assert (run.returncode, run.stdout, run.stderr) == (0, "the caller's own handler\n", "")


def test_finishing_off_the_main_thread_is_harmless() -> None:
    run = python("""
        import threading
        from pipeline import interrupt
        interrupt.arm()
        t = threading.Thread(target=interrupt.finishing)
        t.start(); t.join()
        print("ok")
    """)
    assert (run.returncode, run.stdout) == (0, "ok\n")


def test_a_ctrl_c_during_shutdown_of_an_armed_process_is_ignored() -> None:
    run = python("""
        import atexit, os, signal
        from pipeline import interrupt
        atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))  # runs after the armed handler
        interrupt.arm()
        print("done")
    """)
    assert (run.returncode, run.stdout) == (0, "done\n")
    assert "KeyboardInterrupt" not in run.stderr
