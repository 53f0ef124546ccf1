"""The target matrix end to end, with the real compiler and clients.

The sample world (a copy, with a four-platform ``[platforms]`` matrix added to its
pipeline.toml) cooks for vulkan1.2, metal, webgl2 and webgpu in one cook, with 0 errors.
The built-in ``pbr`` and ``chain`` sources serve every target (guards on ``GL_ES`` and
``PIPELINE_TARGET_WEBGPU``), and so does ``mtlx``'s generated text (MaterialX's Vulkan,
WGSL-ready and ESSL generators under the same guards): each key of the three families,
skinned and morphed ones included, gets all four targets' programs, and the report shows
every family ok on every target.  ``pipeline runtime check`` then checks every target
with a client here: Vulkan pipeline states on lavapipe with the validation layer on,
every GLSL ES program linked through EGL, every WebGPU pipeline made through wgpu, 0
failures, and says Metal has none.  A GL-era family
(tests/data/targets) cooks for every platform of the same matrix without an error and
every client loads all of it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from family_worlds import triangle_world
from paths import SAMPLE_WORLD
from robust_helpers import run_cli
from runtime_helpers import needs_egl, needs_vulkan, needs_wgpu
from target_helpers import MATERIALS, TARGETS_DATA

from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader

pytestmark = [needs_vulkan, needs_egl, needs_wgpu]
MATRIX = """
[platforms.desktop]
targets = ["vulkan1.2"]

[platforms.apple]
targets = ["metal"]

[platforms.web]
targets = ["webgl2", "webgpu"]
"""
LABELS = ["metal", "vulkan1.2", "webgl2", "webgpu"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("matrix")
    world = tmp / "world"
    shutil.copytree(SAMPLE_WORLD, world)
    (world / "pipeline.toml").write_text((world / "pipeline.toml").read_text() + MATRIX)
    cooked = run_cli("cook", world, "--out", tmp / "out", "--cache", tmp / "cache", "--json", timeout=600)
    return tmp, world, cooked


FAMILIES = ("chain", "mtlx", "pbr")  # every family of the sample world serves every target
WEB = ("webgl2", "webgpu")


def _family(key_text: str) -> str:
    return key_text.split("/", 1)[0]


def test_one_cook_makes_every_platform_s_outputs(sample) -> None:
    tmp, _, cooked = sample
    assert cooked.returncode == 0, cooked.stderr
    doc = json.loads(cooked.stdout)
    assert sorted(doc["platforms"]) == ["apple", "desktop", "web"]
    assert doc["targets"] == {family: LABELS for family in FAMILIES}
    pak = PakReader(mf.library_path(tmp / "out"))
    chunks = [p for p in (tmp / "out").rglob("*.json") if not p.name.endswith(".level.json")]
    assert len(chunks) == 8
    cooked_keys = set()
    for path in chunks:
        for text, entry in mf.load_chunk_manifest(path).keys.items():
            assert set(entry.targets) == set(LABELS), text
            for label in LABELS:  # every program of the key cooked for the target
                assert set(entry.targets[label]) == {"vertex", "fragment"}, (text, label)
                assert all(pak.get(d) for d in entry.targets[label].values())
            assert entry.stages == entry.targets["vulkan1.2"]
            cooked_keys.add(text)
    assert {_family(k) for k in cooked_keys} == set(FAMILIES)
    # skinned and morphed pbr keys cook for GLSL ES and WebGPU too (uniform block joints, texture deltas)
    assert any("SKINNING=4" in k for k in cooked_keys) and any("MORPH_TARGETS=2" in k for k in cooked_keys)
    # MaterialX graphs from documents and from glTF materials, on the web too
    assert any("DOCUMENT=surfaces/" in k for k in cooked_keys) and any("DOCUMENT=gltf_pbr" in k for k in cooked_keys)
    assert not [line for line in cooked.stderr.splitlines() if ": error: " in line or "Warning" in line]


def test_the_report_shows_each_target_failed_or_ok_on_its_own(sample) -> None:
    tmp, world, _ = sample
    report = run_cli("report", world, "--cache", tmp / "cache", "--json", timeout=300)
    rows = {(r["target"], r["family"]): r for r in json.loads(report.stdout)["targets"]}
    for label, platform in (("vulkan1.2", "desktop"), ("metal", "apple")):
        assert (rows[(label, "*")]["status"], rows[(label, "*")]["failed"]) == ("ok", 0)
        assert rows[(label, "*")]["platforms"] == [platform] and rows[(label, "*")]["bytes"] > 0
    for label in LABELS:
        assert (rows[(label, "*")]["status"], rows[(label, "*")]["failed"]) == ("ok", 0), label
        for family in FAMILIES:
            assert (rows[(label, family)]["status"], rows[(label, family)]["failed"]) == ("ok", 0), (label, family)
            assert rows[(label, family)]["required"] == rows[("vulkan1.2", family)]["required"] > 0
    text = run_cli("report", world, "--cache", tmp / "cache", timeout=300).stdout
    assert "Per target: possible -> valid -> required -> jobs, binaries and bytes" in text


def test_runtime_check_checks_every_target_with_a_client(sample) -> None:
    tmp, _, _ = sample
    checked = run_cli("runtime", "check", tmp / "out", "--json", timeout=600)
    assert checked.returncode == 0, checked.stderr
    doc = json.loads(checked.stdout)
    assert doc["pipelines"] == doc["created"] > 0 and doc["validation_errors"] == [] and doc["failed"] == []
    targets = {t["target"]: t for t in doc["targets"]}
    assert sorted(targets) == ["metal", "webgl2", "webgpu"]
    assert targets["metal"]["client"] is None and "no Metal compiler or device runs here" in targets["metal"]["note"]
    assert "through EGL" in targets["webgl2"]["client"] and "through wgpu" in targets["webgpu"]["client"]
    for label in WEB:  # every program, mtlx's generated ones included, made by its client
        assert targets[label]["created"] == targets[label]["programs"] > 0 and targets[label]["failed"] == [], label
    assert targets["webgl2"]["programs"] == targets["webgpu"]["programs"] == targets["metal"]["programs"]


def test_a_portable_family_cooks_for_every_platform_and_each_client_loads_it(tmp_path: Path) -> None:
    things = [({"name": "plain"}, ()), ({"name": "colored"}, ("COLOR_0",))]
    world = triangle_world(tmp_path / "world", TARGETS_DATA / "rules", MATERIALS, things, MATRIX)
    args = ("--out", tmp_path / "out", "--cache", tmp_path / "cache")
    first = run_cli("cook", world, *args)
    assert first.returncode == 0, first.stderr
    web = run_cli("cook", world, *args, "--platform", "web")
    assert web.returncode == 0, web.stderr
    (entry, _) = mf.load_chunk_manifest(tmp_path / "out" / "level" / "props.json").keys.values()
    assert set(entry.targets) == {"webgl2", "webgpu-relaxed"}
    again = run_cli("cook", world, *args)  # the cook of every platform is no no-op after a cook of one
    assert again.returncode == 0, again.stderr
    (entry, _) = mf.load_chunk_manifest(tmp_path / "out" / "level" / "props.json").keys.values()
    assert set(entry.targets) == {"vulkan1.2-relaxed", "metal-relaxed-msl2.1", "webgl2", "webgpu-relaxed"}
    checked = run_cli("runtime", "check", tmp_path / "out", "--json")
    doc = json.loads(checked.stdout)
    assert checked.returncode == 0 and doc["pipelines"] == doc["created"] == 2
    assert [(t["target"], t["programs"], t["created"]) for t in doc["targets"]] == [
        ("metal-relaxed-msl2.1", 2, 0), ("webgl2", 2, 2), ("webgpu-relaxed", 2, 2)]
