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


TEARDOWN = """
    import atexit, os, sys, threading, time
    from pipeline import interrupt

    class Marker:
        def __del__(self):  # runs when the interpreter tears its modules down
            os.write(1, b"|torn down")

    marker = Marker()
    atexit.register(lambda: sys.stdout.write("|exit handler"))
    sys.stdout.write("work done")  # buffered until the exit flushes it
"""


def ending(code: str) -> subprocess.CompletedProcess:
    """The process above, ended by ``code``."""
    return python(textwrap.dedent(TEARDOWN) + textwrap.dedent(code))


def test_leave_runs_the_exit_handlers_and_skips_the_teardown() -> None:
    run = ending("interrupt.leave(3)\n")
    assert (run.returncode, run.stdout, run.stderr) == (3, "work done|exit handler", "")


def test_the_usual_exit_tears_down_where_leave_does_not() -> None:
    run = ending("sys.exit(3)\n")  # the same process, left the usual way
    assert (run.returncode, run.stdout) == (3, "work done|exit handler|torn down")


def test_leave_prints_a_message_code_and_exits_1() -> None:
    run = ending("interrupt.leave('pipeline: error: no world')\n")
    assert (run.returncode, run.stdout, run.stderr) == (1, "work done|exit handler", "pipeline: error: no world\n")


def test_leave_waits_for_a_thread_that_still_runs() -> None:
    run = ending("""
        threading.Thread(target=lambda: (time.sleep(0.2), sys.stdout.write("|thread done"))).start()
        interrupt.leave(0)
    """)
    assert run.returncode == 0
    assert run.stdout == "work done|thread done|exit handler|torn down"


def test_leave_takes_the_usual_exit_when_the_output_cannot_be_flushed() -> None:
    run = ending("""
        class Closed:
            def write(self, text): return len(text)
            def flush(self): raise BrokenPipeError(32, "Broken pipe")
        real, sys.stdout = sys.stdout, Closed()
        try:
            interrupt.leave(4)
        except SystemExit as exc:
            sys.stdout = real
            os.write(1, f"|usual exit {exc.code}".encode())
            raise
    """)
    assert run.returncode == 4
    assert "|usual exit 4" in run.stdout and run.stdout.endswith("|exit handler|torn down")
