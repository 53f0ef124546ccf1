"""The last moments of the ``pipeline`` command: a Ctrl-C once the work is done.

After a command has done its work the interpreter still shuts down (threads
joined, exit handlers run).  A Ctrl-C landing there would otherwise end the
process with a traceback or as killed by SIGINT; from :func:`finishing` on it ends
the process at once, with what was printed flushed, the usual one line and exit
code 130.  Only the ``pipeline`` command arms this (:func:`arm`); a program that
calls the CLI as a library keeps its own SIGINT handler.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys

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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe or a write this signal interrupted
            pass
    try:
        os.write(2, b"pipeline: interrupted\n")
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)
