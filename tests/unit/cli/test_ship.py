"""``pipeline verify-ship``: one line per hole, exit 1; a ready build says so and exits 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from runtime_helpers import SAMPLE, cook
from pipeline.cli import main
from pipeline.cli.ship import command


def test_verify_ship_passes_a_cook_and_names_the_holes_of_another_folder(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE / "forest" / "c02", tmp_path / "world" / "c02")
    out = cook(tmp_path / "world", tmp_path)
    runner = CliRunner()
    ok = runner.invoke(main, ["verify-ship", str(tmp_path / "world"), "--out", str(out),
                              "--cache", str(tmp_path / "cache")])
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith(f"{out}: ready to ship: ")
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = runner.invoke(main, ["verify-ship", str(tmp_path / "world"), "--out", str(empty),
                               "--cache", str(tmp_path / "cache"), "--json"])
    assert bad.exit_code == 1
    doc = json.loads(bad.stdout)
    assert not doc["ok"] and doc["holes"][0]["missing"].startswith("shader library: ")
    assert {h["chunk"] for h in doc["holes"][1:]} == {"c02"}
    assert command.name == "verify-ship"
