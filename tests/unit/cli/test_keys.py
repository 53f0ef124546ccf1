"""``pipeline keys``: the keys of a world as text and JSON, each stage's defines, exit 1 on a located error."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from robust_helpers import GOOD_FILES, make_world

from pipeline import api
from pipeline.cli._common import versioned
from pipeline.cli.keys import command


def run(*args: object):
    return CliRunner().invoke(command, [str(a) for a in args])


def test_text_and_json_list_the_keys_the_library_finds(tmp_path: Path) -> None:
    make_world(tmp_path / "w")
    expected = api.keys(api.open_world(tmp_path / "w"), cache=tmp_path / "cache")
    texts = sorted(key.text for key in expected.required.keys)
    text = run(tmp_path / "w", "--cache", tmp_path / "cache")
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[-1].startswith(f"{len(texts)} keys for {len(GOOD_FILES)} draws")
    assert sorted(line.split()[-1] for line in text.stdout.splitlines()[:-1]) == texts
    doc = json.loads(run(tmp_path / "w", "--cache", tmp_path / "cache", "--json").stdout)
    assert doc == json.loads(json.dumps(versioned(expected.to_json())))


def test_defines_lists_what_each_stage_keeps(tmp_path: Path) -> None:
    make_world(tmp_path / "w")
    result = run(tmp_path / "w", "--cache", tmp_path / "cache", "--defines")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    keys = [i for i, line in enumerate(lines) if "draws  " in line]
    assert keys and all(lines[i + 1].lstrip().startswith(("preamble:", "vertex:", "fragment:")) for i in keys)
    assert "PASS_FORWARD=1" in result.stdout


def test_a_broken_file_is_one_located_line_and_exit_1(tmp_path: Path, write_gltf, monkeypatch) -> None:
    make_world(tmp_path / "w")
    write_gltf(tmp_path / "w" / "town" / "c00" / "bad.gltf", {"asset": {"version": "2.0"}, "extensionsRequired": ["X_y"]})
    monkeypatch.chdir(tmp_path)
    result = run("w", "--cache", tmp_path / "cache")
    assert result.exit_code == 1
    assert result.stderr.strip() == "w/town/c00/bad.gltf: /extensionsRequired/0: error: required extension 'X_y' is not supported"
    *keys, summary = result.stdout.splitlines()  # the other files still give their keys
    assert keys and summary.startswith(f"{len(keys)} keys for {len(GOOD_FILES)} draws")
