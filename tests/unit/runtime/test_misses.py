"""Misses: a key a chunk lacks (its compile failed) is drawn through the pass's fallback, logged, and check-log
names it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.runtime.misses import MissLog, read_log

from runtime_helpers import SAMPLE, chunk_index, fail_key, needs_vulkan  # noqa: E402
from runtime_oracle import iou, silhouette, triangles  # noqa: E402

FILE = "town/square/character.glb"   # skinned: its forward key is used by no other draw of the chunk
CHUNK = "town/square"
STATIC_FILE = "town/market/car.glb"   # not skinned: the fallback draws the same silhouette
STATIC_CHUNK = "town/market"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "world")
    return tmp_path / "world"


def _cook(world: Path, tmp: Path) -> Path:
    api.cook(api.open_world(world), cache=tmp / "cache", out=tmp / "out", jobs=2)
    return tmp / "out"


def _delete_key(out: Path, chunk: str, file: str, label: str = "pbr/forward") -> tuple[str, dict]:
    """Take from the chunk the key only this file's draw uses, as a failed compile leaves it (the index still
    names the key for the draw, without stage blobs or pipeline state)."""
    manifest = chunk_index(out, chunk)
    uses: dict[str, int] = {}
    for r in (r for r in manifest.draws if r["variant"] is None):
        uses[r["passes"][label]["key"]] = uses.get(r["passes"][label]["key"], 0) + 1
    record = next(r for r in manifest.draws if r["file"] == file and r["variant"] is None
                  and uses[r["passes"][label]["key"]] == 1)  # the one draw of its key (a render draws base mappings)
    key = record["passes"][label]["key"]
    assert "fallback" in record["passes"][label] and manifest.pipelines[record["passes"][label]["fallback"]]["key"] != key
    fail_key(out, chunk, key)
    return key, {f: record[f] for f in ("file", "node", "mesh", "primitive", "material", "variant")}


@needs_vulkan
def test_missing_key_draws_through_the_fallback_and_check_log_names_it(world: Path, tmp_path: Path) -> None:
    out = _cook(world, tmp_path)
    key, draw = _delete_key(out, STATIC_CHUNK, STATIC_FILE)
    log = tmp_path / "misses.jsonl"
    result = api.runtime_render(world, STATIC_FILE, out=out, size=(256, 256), miss_log=log)
    assert result.fallbacks == 1 and result.validation_messages == [] and result.not_drawn == []
    # the fallback draws the same silhouette (its vertex stage reads positions the same way)
    expected = silhouette(triangles(world / STATIC_FILE), result.view_projection, (256, 256))
    assert iou(result.mask, expected) >= 0.98

    records = [r for _, r in read_log(log)]
    assert [(r["key"], r["chunk"], r["draw"], r["pass"]) for r in records] == \
        [(key, STATIC_CHUNK, draw, "pbr/forward")]
    assert records[0]["time"].endswith("+00:00")

    run = CliRunner().invoke(main, ["check-log", str(world), str(log), "--out", str(out),
                                    "--cache", str(tmp_path / "cache"), "--json"])
    assert run.exit_code == 1, run.output
    doc = json.loads(run.stdout)
    assert doc["uncovered"] == 1 and doc["covered"] == 0
    miss = doc["misses"][0]
    assert (miss["key"], miss["status"], miss["draw"], miss["covered"]) == (key, "stale", draw, False)

    text = CliRunner().invoke(main, ["check-log", str(world), str(log), "--out", str(out),
                                     "--cache", str(tmp_path / "cache")])
    assert text.exit_code == 1 and f"{log}:1: error: stale: {key} for {STATIC_FILE}" in text.output

    _cook(world, tmp_path)  # the cook writes the chunk's index again: the same log is now covered
    again = CliRunner().invoke(main, ["check-log", str(world), str(log), "--out", str(out),
                                      "--cache", str(tmp_path / "cache"), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["misses"][0]["status"] == "cooked"


def test_runtime_key_names_the_rules_behind_the_content_key(world: Path, tmp_path: Path) -> None:
    """A key the content never asks for (a material changed at run time) is not covered; the rule is named."""
    out = _cook(world, tmp_path)
    record = next(r for r in chunk_index(out, CHUNK).draws if r["file"] == FILE)
    content_key = record["passes"]["pbr/forward"]["key"]
    runtime_key = content_key.replace("CLEARCOAT=0", "CLEARCOAT=1")
    assert runtime_key != content_key
    log = tmp_path / "misses.jsonl"
    draw = {f: record[f] for f in ("file", "node", "mesh", "primitive", "material", "variant")}
    MissLog(log).append(key=runtime_key, chunk=CHUNK, draw=draw, pass_="pbr/forward")
    MissLog(log).append(key=None, chunk=CHUNK, draw=dict(draw, node=999), pass_="pbr/forward")
    (log.open("a")).write("not json\n")
    result = api.check_log(world, log, out=out, cache=tmp_path / "cache")
    first, second = result.misses
    assert (first.status, first.covered, first.content_key) == ("runtime", False, content_key)
    assert [(r["feature"], r["logged"], r["content"]) for r in first.rules] == [("CLEARCOAT", "1", "0")]
    line = next(i for i, text in enumerate((api.open_world(world).rules_dir / "pbr.yaml").read_text().splitlines(), 1)
                if text.startswith("  CLEARCOAT: material.clearcoat"))
    assert first.rules[0]["rule"].startswith(f"rules/pbr.yaml:{line}:")
    assert (second.status, second.covered) == ("runtime", False) and "made at run time" in second.reason
    assert [(e.file, e.line, e.severity) for e in result.errors] == [(str(log), 3, "error")]
    assert result.to_json()["errors"] == [{"file": str(log), "line": 3, "message": result.errors[0].message}]
    assert not result.ok
