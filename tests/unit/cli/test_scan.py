"""``pipeline scan``: human summary, --json document, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli.scan import command

BOX = "glTF-Sample-Assets/Models/BoxVertexColors"


def run(*args: str):
    return CliRunner().invoke(command, list(args))


def test_json_document(corpus: Path, tmp_path: Path) -> None:
    result = run(str(corpus / BOX), "--json", "--cache", str(tmp_path / "cache"))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["files"], doc["chunks"], doc["errors"]) == (2, 2, [])
    draw = doc["draws"][0]
    assert set(draw) == {"file", "chunk", "level", "node", "mesh", "primitive", "material", "variant", "facts"}
    assert draw["file"] == "glTF/BoxVertexColors.gltf" and draw["chunk"] == "glTF" and draw["level"] == "glTF"
    assert set(draw["facts"]) == {"mesh", "material", "node", "scene", "chunk", "draw"}


def test_summary_and_exit_code_1_on_errors(tmp_path: Path, write_gltf, monkeypatch) -> None:
    write_gltf(tmp_path / "w" / "a" / "good.gltf", {"asset": {"version": "2.0"}})
    write_gltf(tmp_path / "w" / "a" / "bad.gltf", {"asset": {"version": "2.0"}, "extensionsRequired": ["X_y"]})
    monkeypatch.chdir(tmp_path)  # messages name files from the current folder
    result = run(str(tmp_path / "w"), "--no-cache")
    assert result.exit_code == 1
    assert "files    2" in result.stdout and "draws    0" in result.stdout
    assert result.stderr.strip() == "w/a/bad.gltf: /extensionsRequired/0: error: required extension 'X_y' is not supported"
    errors = json.loads(run(str(tmp_path / "w"), "--no-cache", "--json").stdout)["errors"]
    assert errors == [{"file": "a/bad.gltf", "pointer": "/extensionsRequired/0", "line": None, "col": None,
                       "message": "required extension 'X_y' is not supported"}]


def test_help_explains() -> None:
    text = run("--help").stdout
    assert "PATH is a world folder" in text and "--json" in text and "--cache" in text
