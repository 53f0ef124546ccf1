"""The last moments of the ``pipeline`` command: a Ctrl-C once the work is done, and the exit.

After a command has done its work the interpreter still shuts down (threads
joined, exit handlers run).  A Ctrl-C landing there would otherwise end the
process with a traceback or as killed by SIGINT; from :func:`finishing` on it ends
the process at once, with what was printed flushed, the usual one line and exit
code 130.  Only the ``pipeline`` command arms this (:func:`arm`); a program that
calls the CLI as a library keeps its own SIGINT handler.

Past its exit handlers the interpreter frees every object it holds, one by one: after
a cook of one chunk that is a tenth of the process's time, and nothing on disk depends
on it (every file the cook writes is written and closed, every store closed, by then).
The command's entry point therefore leaves through :func:`leave`: what was printed
flushed, the exit handlers run, then ``os._exit``.  Where the usual exit has more to
do (a thread still running, a pipe that will not take the rest of the output), it
takes the usual exit instead.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading

EXIT_INTERRUPTED = 130  # 128 + SIGINT
_armed = False


def arm() -> None:
    """This process is the ``pipeline`` command (called by its entry point).

    Exit handlers run last-registered-first, so the one registered here runs after
    all others: past it the interpreter only tears its modules down, with Python's
    handler for SIGINT gone, and a Ctrl-C there is ignored rather than a signal death.
    """
    global _armed
    _armed = True
    atexit.register(_ignore_from_here)


def _ignore_from_here() -> None:
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        pass


def finishing() -> None:
    """The work is done (or given up): a Ctrl-C from here on exits 130 at once."""
    if not _armed:
        return
    try:
        signal.signal(signal.SIGINT, _exit_now)
    except ValueError:  # not the main thread
        pass


def _exit_now(signum, frame) -> None:
    _flush_quietly()
    try:
        os.write(2, b"pipeline: interrupted\n")
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)


def leave(code: object = 0) -> None:
    """End this process with ``code`` (what ``sys.exit`` takes) without tearing the interpreter down: the
    output flushed and the exit handlers run first.  Falls back on ``sys.exit`` (which returns only by
    raising) while a thread that is no daemon still runs, or when the output cannot be flushed."""
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)  # as the interpreter prints sys.exit's message
        code = 1
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)  # the interpreter waits for it
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed pipe: the interpreter's exit reports it as it does
        sys.exit(code)
    atexit._run_exitfuncs()
    _flush_quietly()  # what an exit handler printed to a closed pipe is lost either way
    os._exit(code)


def _flush_quietly() -> None:
    """Flush stdout and stderr before an ``os._exit``, a stream that cannot take it left as it is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe, or a write a signal interrupted
            pass
