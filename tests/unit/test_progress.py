"""Progress reporting: a live bar on a terminal, periodic plain lines otherwise, or nothing."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from pipeline import progress as progress_module
from pipeline.progress import NullProgress, PlainProgress, RichProgress, for_stream, scan_progress
from recorders import ProgressRecorder as Recorder


class Clock:
    """``time.monotonic`` as the test sets it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture()
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(progress_module, "time", SimpleNamespace(monotonic=clock))  # this module's clock only
    return clock


def test_plain_progress_prints_a_line_at_start_then_at_most_one_per_interval(clock: Clock) -> None:
    out = io.StringIO()
    bar = PlainProgress(out, interval=2.0)
    bar.start("compiling", 5)
    bar.advance()
    clock.now += 1.0
    bar.advance()              # within the interval: silent
    clock.now += 1.5
    bar.advance(2)             # 2.5 s since the last line
    clock.now += 0.5
    bar.advance()
    assert out.getvalue().splitlines() == ["compiling: 0/5", "compiling: 4/5"]


def test_plain_progress_finish_prints_the_final_count_only_when_work_was_done(clock: Clock) -> None:
    out = io.StringIO()
    bar = PlainProgress(out)
    bar.start("scanning", 3)
    bar.finish()                # nothing done: no closing line
    bar.advance(3)
    bar.finish()
    assert out.getvalue().splitlines() == ["scanning: 0/3", "scanning: 3/3"]


def test_plain_progress_start_resets_the_count_for_a_new_phase(clock: Clock) -> None:
    out = io.StringIO()
    bar = PlainProgress(out)
    bar.start("scanning", 2)
    bar.advance(2)
    bar.start("compiling", 7)
    bar.finish()
    assert out.getvalue().splitlines() == ["scanning: 0/2", "compiling: 0/7"]


def test_notes_go_out_whole_and_at_once() -> None:
    out = io.StringIO()
    PlainProgress(out, interval=3600).note("a.frag:3:1: warning: unused")
    assert out.getvalue() == "a.frag:3:1: warning: unused\n"


def test_plain_progress_writes_to_stderr_by_default(capsys) -> None:
    PlainProgress().note("to stderr")
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "to stderr\n")  # stdout stays clean for --json


def test_for_stream_picks_by_terminal_and_quiet() -> None:
    assert isinstance(for_stream(io.StringIO()), PlainProgress)
    assert isinstance(for_stream(Tty()), RichProgress)
    assert isinstance(for_stream(Tty(), quiet=True), NullProgress)
    assert isinstance(for_stream(io.StringIO(), quiet=True), NullProgress)


def test_the_rich_bar_can_finish_before_it_starts_and_twice() -> None:
    bar = RichProgress()
    bar.advance()              # no task yet: nothing to advance
    bar.finish()
    bar.start("compiling", 2)
    bar.advance(2)
    bar.finish()
    bar.finish()
    assert bar._task is None


def test_scan_progress_is_none_for_no_progress() -> None:
    assert scan_progress(None) is None
    assert scan_progress(NullProgress()) is None


def test_scan_progress_starts_once_advances_per_call_and_finishes_at_the_total() -> None:
    seen = Recorder()
    report = scan_progress(seen)
    for done in range(1, 4):
        report(done, 3)
    assert seen.calls == [("start", "scanning", 3), ("advance", 1), ("advance", 1), ("advance", 1), ("finish",)]


def test_scan_progress_through_plain_lines(clock: Clock) -> None:
    out = io.StringIO()
    report = scan_progress(PlainProgress(out))
    report(1, 2)
    report(2, 2)
    assert out.getvalue().splitlines() == ["scanning: 0/2", "scanning: 2/2"]
