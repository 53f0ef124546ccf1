"""After a cook, one short change block: files written, keys that appeared or vanished,
and each compiled job with its key and the input that changed (real compiler)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.cook.timings import read_log, summarize
from pipeline.outputs.manifest import load_chunk_manifest

BARK = "forest/c01/rocks.gltf"

# The pinned block for one material edit: "bark" gains an occlusion texture (the old key
# stays: other draws of the chunk still use it).
EDIT_BLOCK = """\
changes:
  files written (4): build/forest/c01.json, build/forest.level.json, build/shaders.pak, build/shaders.chunks
  per-chunk key uses +1 -0:
    + forest/c01: pbr/forward {new}  (OCCLUSION_MAP 0 -> 1; was pbr/forward {old})
  compiled 1 job:
    pbr/pbr.frag [fragment] for pbr/forward {new}: new: this source and define set were never compiled; \
OCCLUSION_MAP 0 -> 1
"""
OLD = ("pbr/forward{ALPHA_MODE=OPAQUE,ANISOTROPY=0,BASE_COLOR_MAP=1,CLEARCOAT=0,EMISSIVE_MAP=0,INSTANCING=0,"
       "IRIDESCENCE=0,METALLIC_ROUGHNESS_MAP=0,MORPH_NORMAL=0,MORPH_TANGENT=0,MORPH_TARGETS=0,NORMAL_MAP=0,"
       "OCCLUSION_MAP=0,SHEEN=0,SKINNING=0,SPECULAR_GLOSSINESS=0,TANGENTS=0,TEXTURE_TRANSFORM=0,TRANSMISSION=0,"
       "UNLIT=0,UV_SETS=1,VERTEX_COLOR=NONE,VOLUME=0}")
NEW = OLD.replace("OCCLUSION_MAP=0", "OCCLUSION_MAP=1")


# A build of one quality tier without shadows: the edit gives one new key (not one per runtime axis value).
DEFAULT_AXES = '\n[axes]\nSHADOWS = [false]\nQUALITY = ["HIGH"]\n'


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    """A copy of the sample world at ``tmp_path / "world"`` with its runtime axes at their defaults, and
    ``tmp_path`` the working folder."""
    from paths import SAMPLE_WORLD

    shutil.copytree(SAMPLE_WORLD, tmp_path / "world")
    with open(tmp_path / "world" / "pipeline.toml", "a") as f:
        f.write(DEFAULT_AXES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cook(*extra: str):
    result = CliRunner().invoke(main, ["cook", "world", "--cache", "cache", "--out", "build", "-j", "1",
                                       "--color", "never", *extra])
    return result


def edit_bark(site: Path) -> None:
    path = site / "world" / BARK
    doc = json.loads(path.read_text())
    (bark,) = [m for m in doc["materials"] if m.get("name") == "bark"]
    bark["occlusionTexture"] = {"index": 0}
    path.write_text(json.dumps(doc, indent=1))


def chunk_keys(site: Path, chunk: str = "forest/c01") -> dict:
    """The cooked chunk's keys: key text -> entry."""
    return load_chunk_manifest(site / "build" / f"{chunk}.json").keys


def block(output: str) -> str:
    lines = output.splitlines(keepends=True)
    start = lines.index("changes:\n")
    end = next(i for i, line in enumerate(lines) if line.startswith("cooked "))
    return "".join(lines[start:end])


def test_one_material_edit_prints_the_pinned_change_block(site):
    first = cook()
    assert first.exit_code == 0, first.output
    manifests = [load_chunk_manifest(p) for p in (site / "build").rglob("*.json") if ".level." not in p.name]
    n = sum(len(m.keys) for m in manifests)
    distinct = len({k for m in manifests for k in m.keys})
    assert f"per-chunk key uses +{n} -0 ({distinct} distinct keys; {n} in 8 chunk(s) cooked for the first time)" \
        in first.output
    assert "changes:" not in cook().output  # nothing changed, nothing said
    edit_bark(site)
    again = cook()
    assert again.exit_code == 0, again.output
    keys = chunk_keys(site)
    assert block(again.output) == EDIT_BLOCK.format(new=keys[NEW].hash[:12], old=keys[OLD].hash[:12])
    assert max(map(len, block(again.output).splitlines())) < 160  # short: no define dumps
    doc = json.loads(cook("--json").output)  # nothing left to do
    assert doc["changes"] == {"written": [], "removed": [], "keys_added": [], "keys_removed": [], "new_chunks": []}


def test_json_carries_the_changes_and_explain_names_key_and_change(site):
    assert cook().exit_code == 0
    edit_bark(site)
    doc = json.loads(cook("--json").output)
    keys = chunk_keys(site)
    assert doc["changes"]["keys_added"] == [
        {"chunk": "forest/c01", "key": NEW, "hash": keys[NEW].hash,
         "nearest": {"key": OLD, "hash": keys[OLD].hash, "changed": {"OCCLUSION_MAP": ["0", "1"]}}}]
    assert doc["changes"]["keys_removed"] == []
    (line,) = doc["explain"]
    assert line["key"] == NEW and line["key_hash"] == keys[NEW].hash and line["stage"] == "fragment"
    assert line["changed"] == {"OCCLUSION_MAP": ["0", "1"]}
    assert line["reason"].startswith("new:") and line["seconds"] > 0


def test_quiet_drops_the_block_and_verbose_lists_everything(site):
    quiet = cook("-q")
    assert "changes:" not in quiet.output and quiet.output.startswith("cooked 8 chunks")
    shutil.rmtree(site / "build")
    verbose = cook("-v")
    assert "more (-v lists all)" not in verbose.output
    shipped = [p for p in (site / "build").rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert sorted(p.name for p in shipped if p.suffix == ".pak") == ["shaders.pak"]  # one library, 8 indexes, 2 levels
    assert len(shipped) == 8 + 2 + 2  # chunk indexes, level manifests, the library and its chunk table
    assert verbose.output.count("\n    + ") == 0 and f"files written ({len(shipped)})" in verbose.output
    assert verbose.output.count("build/") == len(shipped)


@pytest.mark.slow
def test_every_compile_lands_in_the_timing_log(site):
    first = json.loads(cook("--json").output)
    rows = read_log(site / "cache")
    assert len(rows) == first["compiled"] == first["jobs"] > 0
    assert {r["family"] for r in rows} == {"chain", "mtlx", "pbr"} and all(r["seconds"] > 0 and r["ok"] for r in rows)
    edit_bark(site)
    cook()
    summary = summarize(read_log(site / "cache"))
    assert summary.cooks_logged == 2 and summary.total_runs == 1 and summary.jobs[0]["key"] == NEW
    report = CliRunner().invoke(main, ["report", "world", "--cache", "cache", "--timings"])
    assert report.exit_code == 0, report.output
    assert "pbr/pbr.frag [fragment]" in report.output and "1 job" in report.output


@pytest.mark.slow
def test_a_replaced_key_shows_as_one_changed_line(site):
    assert cook().exit_code == 0
    path = site / "world" / BARK
    doc = json.loads(path.read_text())
    (rock,) = [m for m in doc["materials"] if m.get("name") == "rock"]  # its key is used by rock draws only
    rock["emissiveTexture"] = {"index": 0}
    path.write_text(json.dumps(doc, indent=1))
    lines = cook().output.splitlines()
    assert "  per-chunk key uses +1 -1:" in lines
    (added,) = [line for line in lines if line.startswith("    + forest/c01: pbr/forward ")]
    (gone,) = [line for line in lines if line.startswith("    - forest/c01: pbr/forward ")]
    assert re.search(r"\(EMISSIVE_MAP 0 -> 1; was pbr/forward [0-9a-f]{12}\)$", added)
    assert added.endswith(gone.split(": ", 1)[1] + ")")  # the vanished key is the one it replaced
    (job,) = [line for line in lines if line.startswith("    pbr/pbr.frag [fragment] for ")]
    assert job.endswith("; EMISSIVE_MAP 0 -> 1")
    verbose = cook("-v").output  # nothing left to do: no block
    assert "changes:" not in verbose


def test_verbose_shows_whole_keys(site):
    assert cook().exit_code == 0
    edit_bark(site)
    lines = block(cook("-v").output).splitlines()
    assert f"    + forest/c01: {NEW}  (OCCLUSION_MAP 0 -> 1; was {OLD})" in lines
    assert any(line.startswith(f"    pbr/pbr.frag [fragment] for {NEW}: new:") for line in lines)
