"""``pipeline watch``: the first cook's status line, the watching notice, errors named as the cook names them."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from robust_helpers import GOOD_CHUNKS, make_world

from pipeline.cli.watch import command
from pipeline.watch import Watcher


@pytest.fixture
def once(monkeypatch) -> None:
    """The real watch loop, stopped as soon as it says it is watching."""
    real_run = Watcher.run

    def run(self, report, *, ready=None, stop=None):
        stop = threading.Event()

        def ready_then_stop(roots):
            ready(roots)
            stop.set()

        real_run(self, report, ready=ready_then_stop, stop=stop)

    monkeypatch.setattr(Watcher, "run", run)


def invoke(world: Path, tmp: Path, *extra: str):
    args = [str(world), "--out", str(tmp / "out"), "--cache", str(tmp / "cache"), "--jobs", "1", *extra]
    return CliRunner().invoke(command, args)


def test_the_first_cook_is_one_status_line_then_watching(tmp_path: Path, once) -> None:
    make_world(tmp_path / "w")
    result = invoke(tmp_path / "w", tmp_path)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 1 and "compiled" in result.stdout
    watching, stopped = result.stderr.splitlines()
    assert watching.startswith(f"watching {tmp_path / 'w'}, ") and watching.endswith(" (Ctrl-C to stop)")
    assert stopped == "pipeline watch: stopped"
    assert all((tmp_path / "out" / f"{chunk}.json").is_file() for chunk in GOOD_CHUNKS)


def test_json_carries_the_error_lines_the_cook_prints(tmp_path: Path, write_gltf, monkeypatch, once) -> None:
    make_world(tmp_path / "w")
    write_gltf(tmp_path / "w" / "town" / "c00" / "bad.gltf", {"asset": {"version": "2.0"}, "extensionsRequired": ["X_y"]})
    monkeypatch.chdir(tmp_path)
    result = invoke(Path("w"), Path("."), "--json", "-q")
    line = "w/town/c00/bad.gltf: /extensionsRequired/0: error: required extension 'X_y' is not supported"
    assert result.stderr.splitlines() == [line]  # -q: no watching notice
    (doc,) = [json.loads(text) for text in result.stdout.splitlines()]
    assert doc["errors"] == [line] and doc["format"]
