"""Paths in messages: lexically normalised, relative to the current folder when inside it (absolute
otherwise), and the same text from ``pipeline cook`` and ``pipeline watch`` for the same broken file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.cli._common import display_path
from pipeline.cli.watch import _lines
from pipeline.watch import Watcher
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
BROKEN_RULE = ("shader: pbr\n", "shader: [pbr\n")  # line 8 of rules/pbr.yaml: invalid YAML


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """``tmp/world`` (the sample world, its rule sets in ``tmp/rules`` named as ``../rules``)."""
    shutil.copytree(SAMPLE, tmp_path / "world")
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "world" / "pipeline.toml").write_text('level_depth = 1\nrules = "../rules"\n')
    return tmp_path


def break_rule(layout: Path) -> None:
    rule = layout / "rules" / "pbr.yaml"
    text = rule.read_text()
    assert BROKEN_RULE[0] in text
    rule.write_text(text.replace(*BROKEN_RULE))


def break_gltf(layout: Path) -> None:
    (layout / "world" / "forest" / "c01" / "bad.gltf").write_text('{"asset": \n')


def cook_lines(layout: Path) -> list[str]:
    run = CliRunner().invoke(main, ["cook", str(layout / "world" / ".." / "world"), "-q", "--cache",
                                    str(layout / "cache"), "--out", str(layout / "out"), "--scheduler", "none"])
    assert run.exit_code == 1, run.output
    return [line for line in run.stderr.splitlines() if ": error: " in line]


def watch_lines(layout: Path) -> list[str]:
    """The error lines ``pipeline watch`` prints for its first cook (in process, without the loop)."""
    watcher = Watcher(layout / "world" / ".." / "world", out=layout / "out", cache=layout / "cache")
    return _lines(watcher.recook(None, []))


@pytest.mark.parametrize("broken", ["rule", "gltf"])
@pytest.mark.parametrize("where", ["parent", "world"])
def test_cook_and_watch_name_a_broken_file_the_same(layout: Path, monkeypatch, broken: str, where: str) -> None:
    (break_rule if broken == "rule" else break_gltf)(layout)
    monkeypatch.chdir(layout if where == "parent" else layout / "world")
    cooked = cook_lines(layout)
    assert len(cooked) == 1 and watch_lines(layout) == cooked
    expected = {("rule", "parent"): "rules/pbr.yaml:8:12: error: invalid YAML",
                ("rule", "world"): f"{layout / 'rules' / 'pbr.yaml'}:8:12: error: invalid YAML",
                ("gltf", "parent"): "world/forest/c01/bad.gltf:2:1: error: invalid JSON",
                ("gltf", "world"): "forest/c01/bad.gltf:2:1: error: invalid JSON"}[broken, where]
    assert cooked[0].startswith(expected)


def test_watch_process_prints_the_normalised_rule_path(layout: Path) -> None:
    """``pipeline watch`` as a user runs it from the parent folder: the rule file reached through
    ``world/../rules`` is named ``rules/pbr.yaml``; the loop is stopped with Ctrl-C."""
    break_rule(layout)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "watch", "world", "--out", "out", "--cache", "cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=layout)
    try:
        first = proc.stderr.readline()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=300)
    assert first.startswith("rules/pbr.yaml:8:12: error: invalid YAML")


def test_display_path_normalises_dot_dot(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    assert display_path("../a/./b/../c.yaml") == "c.yaml"
    assert display_path("../x/../y.yaml") == str(tmp_path / "y.yaml")  # outside the current folder
    assert display_path("forest/../pbr.yaml", root=tmp_path / "a") == "pbr.yaml"
