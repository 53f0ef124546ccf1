"""``python -m pipeline``: the command line, and a no-op cook answered from its stamp with the same words."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from robust_helpers import make_world

from pipeline import __main__ as entry


def run_main(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["pipeline", *args])
    try:
        entry.run()
        code = 0
    except SystemExit as exit_:
        code = exit_.code or 0
    return code, capsys.readouterr().out


def test_the_noop_answer_is_the_full_answer(tmp_path: Path, monkeypatch, capsys) -> None:
    make_world(tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    args = ("cook", "w", "--out", "out", "--cache", "cache", "--jobs", "1", "-q")
    assert run_main(monkeypatch, capsys, *args)[0] == 0
    full = run_main(monkeypatch, capsys, *args)  # nothing changed: the full path writes the stamp
    assert full[0] == 0 and "0 compiled" in full[1]
    calls = []
    monkeypatch.setattr("pipeline.cli.main", lambda **kw: calls.append(kw))  # the stamp answers before the CLI
    assert run_main(monkeypatch, capsys, *args) == full and calls == []


def test_other_commands_go_to_the_command_line(monkeypatch, capsys) -> None:
    code, out = run_main(monkeypatch, capsys, "--help")
    assert code == 0 and out.startswith("Usage: pipeline ")


def test_a_cook_the_stamp_cannot_answer_walks_the_world_once(tmp_path: Path, monkeypatch, capsys) -> None:
    """``python -m pipeline cook``: the stat walk behind a declined stamp is not made again by the command line."""
    from pipeline.cook import noop

    make_world(tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    checks = []
    real = noop.check
    monkeypatch.setattr(noop, "check", lambda args: checks.append(args) or real(args))
    code, out = run_main(monkeypatch, capsys, "cook", "w", "--out", "out", "--cache", "cache", "--jobs", "1", "-q")
    assert code == 0 and "cooked" in out and len(checks) == 1


def test_a_cook_after_a_missed_check_runs_with_what_it_walked_out_of_the_collector_s_sight(
        tmp_path: Path, monkeypatch, capsys) -> None:
    import gc

    make_world(tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    args = ("cook", "w", "--out", "out", "--cache", "cache", "--jobs", "1", "-q")
    assert run_main(monkeypatch, capsys, *args)[0] == 0  # cooked, and stamped
    seen = []
    monkeypatch.setattr("pipeline.cli.main", lambda **kw: seen.append((gc.isenabled(), gc.get_freeze_count())))
    gc.unfreeze()
    touched = next(p for p in sorted((tmp_path / "w").rglob("*")) if p.is_file())
    touched.write_bytes(touched.read_bytes())  # its ctime moves: the check walks the world and misses
    run_main(monkeypatch, capsys, *args)
    assert seen and seen[0][0] and seen[0][1] > 0  # the collector on, what was alive (the walk) frozen
    assert gc.isenabled() and gc.get_freeze_count() == 0  # and all put back after


class _Watch:
    """A meta path finder that sees ``pipeline.cli.cook`` being imported (and may stop it), then lets
    the usual finders import it."""

    def __init__(self, raise_interrupt: bool = False) -> None:
        self.seen: list[bool] = []
        self.raise_interrupt = raise_interrupt

    def find_spec(self, name, path=None, target=None):
        import gc

        if name == "pipeline.cli.cook":
            self.seen.append(gc.isenabled())
            if self.raise_interrupt:
                raise KeyboardInterrupt
        return None


def test_a_cook_imports_its_modules_with_the_collector_off(tmp_path: Path, monkeypatch, capsys) -> None:
    import gc

    make_world(tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    watch = _Watch()
    monkeypatch.delitem(sys.modules, "pipeline.cli.cook", raising=False)
    monkeypatch.setattr(sys, "meta_path", [watch, *sys.meta_path])
    code, out = run_main(monkeypatch, capsys, "cook", "w", "--out", "out", "--cache", "cache", "--jobs", "1", "-q")
    assert code == 0 and "cooked" in out
    assert watch.seen == [False] and gc.isenabled()  # imported once, paused; the collector back on after


def test_a_ctrl_c_while_a_cook_imports_is_the_command_line_s_interrupt(tmp_path: Path, monkeypatch, capsys) -> None:
    make_world(tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "pipeline.cli.cook", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_Watch(raise_interrupt=True), *sys.meta_path])
    monkeypatch.setattr(sys, "argv", ["pipeline", "cook", "w", "--out", "out", "--cache", "cache", "--jobs", "1"])
    with pytest.raises(SystemExit) as stopped:
        entry.run()
    assert stopped.value.code == 130 and capsys.readouterr().err == "pipeline: interrupted\n"
