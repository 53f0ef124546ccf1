"""Progress reporting for long work: a live bar on a terminal, plain lines otherwise.

The library reports through the :class:`Progress` protocol; ``api`` callers that
want silence pass nothing (``NullProgress``).  Output always goes to stderr so
``--json`` documents on stdout stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol


class Progress(Protocol):
    """What a long call reports its phases and steps to (a bar, periodic lines, or nothing)."""

    def start(self, phase: str, total: int) -> None: ...
    def advance(self, n: int = 1) -> None: ...
    def finish(self) -> None: ...
    def note(self, line: str) -> None: ...


class NullProgress:
    """Reports nothing."""

    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass

    def note(self, line: str) -> None:
        pass


class PlainProgress:
    """Periodic plain lines (for logs and CI): at most one line every ``interval`` seconds."""

    def __init__(self, stream=None, interval: float = 2.0):
        self.stream = stream or sys.stderr
        self.interval = interval
        self.phase, self.total, self.done, self._last = "", 0, 0, 0.0

    def start(self, phase: str, total: int) -> None:
        self.phase, self.total, self.done = phase, total, 0
        self._last = time.monotonic()
        self._line()

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._line()

    def finish(self) -> None:
        if self.total and self.done:
            self._line()

    def note(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def _line(self) -> None:
        print(f"{self.phase}: {self.done}/{self.total}", file=self.stream, flush=True)


class RichProgress:
    """A live progress bar (rich) for interactive terminals."""

    def __init__(self):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as _Bar

        self._bar = _Bar(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True), transient=True,
        )
        self._task = None

    def start(self, phase: str, total: int) -> None:
        self.finish()
        self._bar.start()
        self._task = self._bar.add_task(phase, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, n)

    def finish(self) -> None:
        if self._task is not None:
            self._bar.remove_task(self._task)
            self._task = None
            self._bar.stop()

    def note(self, line: str) -> None:
        self._bar.console.print(line, markup=False, highlight=False)


def for_stream(stream=None, quiet: bool = False) -> Progress:
    """A bar when ``stream`` (stderr by default) is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    if quiet:
        return NullProgress()
    return RichProgress() if stream.isatty() else PlainProgress(stream)


def scan_progress(progress: Progress | None):
    """The scanner's ``(done, total)`` callback reporting to ``progress`` (None for none or a NullProgress)."""
    if progress is None or isinstance(progress, NullProgress):
        return None
    state = {"started": False}

    def report(done: int, total: int) -> None:
        if not state["started"]:
            progress.start("scanning", total)
            state["started"] = True
        progress.advance(1)
        if done >= total:
            progress.finish()

    return report
