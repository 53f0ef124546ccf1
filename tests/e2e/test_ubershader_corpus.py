"""A studio ubershader in the older style cooks on the whole corpus for three targets.

The family (tests/data/ubershader: GLSL ES 3.00 without #version, loose uniforms,
``#ifdef`` defines, an enum emitted as symbols, integer defines as array sizes,
per-attribute-type defines, a per-scene aggregate) compiles for webgl2 (validated
GLSL ES text), opengl4.5 and relaxed vulkan1.2 (SPIR-V validated by spirv-val for
its environment) with zero compile errors.  tests/golden/ubershader/defines.json pins
the exact define lists of a few corpus files' keys; regenerate (only for a
deliberate change) with ``PIPELINE_REPIN=1 python3 -m pytest tests/e2e/test_ubershader_corpus.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runtime_helpers import needs_vulkan

from pipeline import api
from pipeline.compilers import validate
from pipeline.outputs.manifest import library_path, load_chunk_manifest
from pipeline.outputs.pak import PakReader
from pipeline.compile.scheduler import JobRunner
from paths import TESTS

DATA = TESTS / "data" / "ubershader"
GOLDEN = TESTS / "golden" / "ubershader" / "defines.json"
FAKE = "glTF-Asset-Generator/Output/Positive/Compatibility/Compatibility_05.gltf"
TARGETS = {"webgl2", "opengl4.5", "vulkan1.2-relaxed"}
PINNED_FILES = (
    "glTF-Sample-Assets/Models/AnimatedMorphCube/glTF/AnimatedMorphCube.gltf",
    "glTF-Sample-Assets/Models/Fox/glTF/Fox.gltf",
    "glTF-Sample-Assets/Models/LightsPunctualLamp/glTF/LightsPunctualLamp.gltf",
    "glTF-Sample-Assets/Models/StainedGlassLamp/glTF/StainedGlassLamp.gltf",
    "glTF-Blender-IO/tests/roundtrip/23_multi_prim_vertex_attribute/23_multi_prim_vertex_attribute.gltf",
)


def legacy_world(path: Path):
    return api.open_world(path, rules=DATA / "rules", materials=DATA / "materials")


@pytest.fixture(scope="module")
def cooked(corpus: Path, tmp_path_factory) -> tuple:
    tmp_path = tmp_path_factory.mktemp("legacy")
    world = legacy_world(corpus)
    compiler = JobRunner(world.materials_dir, "capi", 2)
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=2, compiler=compiler)
    return result, compiler, tmp_path


@pytest.mark.slow
def test_legacy_family_cooks_on_the_corpus_for_three_targets(cooked) -> None:
    result, compiler, tmp_path = cooked
    assert [(e.file, e.key) for e in result.errors] == [(FAKE, None)]
    assert result.run.results and all(r.ok for r in result.run.results.values())
    assert compiler.calls == len(result.plan.jobs)
    targets = {job.request.target for job in result.plan.jobs.values()}
    assert targets == {"webgl2", "opengl4.5", "vulkan1.2"}
    assert any(k.pass_name == "transmission_source" for k in result.plan.stages)  # the per-scene aggregate
    checked = set()
    pak = PakReader(library_path(tmp_path / "out"))  # one library for every chunk
    for manifest_path in sorted((tmp_path / "out").rglob("*.json")):
        if manifest_path.name.endswith(".level.json"):
            continue
        manifest = load_chunk_manifest(manifest_path)
        for entry in manifest.keys.values():
            assert set(entry.targets) == TARGETS
            assert entry.stages == entry.targets["vulkan1.2-relaxed"]  # the Vulkan target's blobs are the stages
            for label, stages in entry.targets.items():
                assert set(stages) == {"vertex", "fragment"}
                for stage, digest in stages.items():
                    if (label, digest) in checked:
                        continue
                    checked.add((label, digest))
                    blob = pak.get(digest)
                    if label == "webgl2":
                        text = blob.decode()
                        assert text.startswith("#version 300 es\n")
                        assert "#line" not in text and "#include" not in text and "#ifdef" not in text
                    else:
                        assert blob[:4] == b"\x03\x02\x23\x07"
                        assert validate(blob, label.removesuffix("-relaxed")) == []
    assert len(checked) >= 100


@needs_vulkan
def test_the_relaxed_vulkan_blobs_make_every_pipeline_without_validation_messages(cooked) -> None:
    result, _, tmp_path = cooked
    check = api.runtime_check(tmp_path / "out")
    assert check.pipelines == check.created > 100
    assert [f.to_json() for f in check.validation_errors] == [] and [f.to_json() for f in check.failed] == []


def _defines(corpus: Path) -> dict:
    out = {}
    for file in PINNED_FILES:
        result = api.keys(legacy_world(corpus / file), defines=True)
        assert not [d for d in result.diagnostics if d.severity == "error"]
        out[file] = {k["key"]: {"draws": k["draws"], **k["defines"]} for k in result.to_json()["keys"]}
    return out


def test_define_lists_of_corpus_draws_match_golden(corpus: Path) -> None:
    now = _defines(corpus)
    if os.environ.get("PIPELINE_REPIN"):
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    assert now == json.loads(GOLDEN.read_text())
    keys = [k for per_file in now.values() for k in per_file]
    assert any("HAS_MORPH_TARGET_POSITION" in k and "WEIGHT_COUNT=2" in k for k in keys)
    assert any("USE_SKINNING=1" in k for k in keys)
    assert any("LIGHT_COUNT=" in k and "LIGHT_COUNT=0" not in k for k in keys)
    assert any(k.startswith("legacy/transmission_source") for k in keys)


def test_report_says_open_for_open_features(corpus: Path, tmp_path: Path) -> None:
    from pipeline.report.html import render_html
    from pipeline.report.render import render

    world = legacy_world(corpus / PINNED_FILES[3])
    doc = api.report(world, cache=tmp_path / "cache").to_json()
    rows = {(r["shader"], r["pass"]): r for r in doc["families"] + doc["totals"]}
    assert rows[("legacy", "forward")]["possible"] == "open" and rows[("legacy", "forward")]["valid"] == "open"
    assert rows[("legacy", "*")]["valid"] == "open" and rows[("legacy", "forward")]["required"] > 0
    table = render(doc, "table")
    assert "legacy/forward" in table and " open " in table
    assert "open (computed from facts)" in render_html(doc) and "open" in render(doc, "csv")


def test_keys_defines_on_the_command_line(corpus: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pipeline.cli import main

    args = ["keys", str(corpus / PINNED_FILES[0]), "--rules", str(DATA / "rules"), "--materials",
            str(DATA / "materials"), "--cache", str(tmp_path / "cache"), "--defines"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    first = next(i for i, line in enumerate(lines) if "legacy/forward{" in line)
    assert [lines[first + 1 + i].split(":")[0].strip() for i in range(3)] == ["preamble", "fragment", "vertex"]
    assert lines[first + 1].split()[1] == "PASS_FORWARD=1"
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    for entry in doc["keys"]:
        defines = entry["defines"]
        assert set(defines) == {"preamble", "vertex", "fragment"}
        names = [n for n, _ in defines["preamble"]]
        for stage in ("vertex", "fragment"):  # each stage keeps a subsequence, in preamble order
            kept = [n for n, _ in defines[stage]]
            assert kept == [n for n in names if n in kept]
        assert ["WEIGHT_COUNT", "2"] in defines["vertex"] and ["MAX_UV_SETS", "2"] not in defines["vertex"]
