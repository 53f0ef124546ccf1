"""``pipeline explain`` on real corpus files: which draws need a key, which rules set it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from paths import REPO

ROOT = REPO
MASK_FORWARD = "adaeb7dd63"    # pbr/forward{ALPHA_MODE=MASK,...,BASE_COLOR_MAP=1,...,UV_SETS=1,...}
UNLIT_FORWARD = "5d49d8c4f4"   # pbr/forward{...,UNLIT=1,UV_SETS=0,...}
UNLIT_TEXTURED = "67e54db798"  # pbr/forward{ALPHA_MODE=BLEND,...,TEXTURE_TRANSFORM=1,UNLIT=1,...}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def rules_line(text: str) -> int:
    """1-based line of ``text`` in rules/pbr.yaml (found independently of the loader)."""
    lines = (ROOT / "rules" / "pbr.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def draws_with_material(gltf: Path, wanted) -> set[tuple[int, int, int, int]]:
    """(node, mesh, primitive, material) of every drawn primitive whose material passes ``wanted``."""
    doc = json.loads(gltf.read_text())
    out = set()
    for n, node in enumerate(doc.get("nodes", [])):
        if "mesh" not in node:
            continue
        for p, prim in enumerate(doc["meshes"][node["mesh"]]["primitives"]):
            m = prim.get("material")
            if m is not None and wanted(doc["materials"][m]):
                out.add((n, node["mesh"], p, m))
    return out


def rule_for(doc: dict, feature: str) -> list[dict]:
    return [r for r in doc["rules"] if r["feature"] == feature]


@pytest.fixture(scope="module")
def models(corpus) -> Path:
    return corpus / "glTF-Sample-Assets" / "Models"


def test_alpha_mask_key_lists_exactly_the_mask_draws(models, tmp_path):
    world = models / "AlphaBlendModeTest"
    doc = api.explain(world, MASK_FORWARD, cache=tmp_path).to_json()
    assert doc["key"].startswith("pbr/forward{ALPHA_MODE=MASK,") and doc["hash"].startswith(MASK_FORWARD)
    expected = draws_with_material(world / "glTF" / "AlphaBlendModeTest.gltf",
                                   lambda m: m.get("alphaMode") == "MASK" and "normalTexture" not in m)
    found = {(d["node"], d["mesh"], d["primitive"], d["material"]) for d in doc["draws"]}
    assert found == expected and len(found) == 3
    assert {(d["file"], d["chunk"], d["variant"]) for d in doc["draws"]} == {("glTF/AlphaBlendModeTest.gltf", "glTF",
                                                                               None)}
    (alpha,) = rule_for(doc, "ALPHA_MODE")
    assert alpha["rule"].endswith(f"pbr.yaml:{rules_line('ALPHA_MODE: material.alphaMode')}:15")
    assert alpha["facts"] == [{"values": {"material.alphaMode": "MASK"}, "draws": 3}]
    assert alpha["value"] == alpha["key_value"] == "MASK"


def test_unlit_key_names_the_unlit_derive_rule(models, tmp_path):
    world = models / "UnlitTest"
    doc = api.explain(world, UNLIT_FORWARD, cache=tmp_path).to_json()
    assert {d["file"] for d in doc["draws"]} == {"glTF/UnlitTest.gltf", "glTF-Binary/UnlitTest.glb"}
    expected = draws_with_material(world / "glTF" / "UnlitTest.gltf",
                                   lambda m: "KHR_materials_unlit" in m.get("extensions", {}))
    gltf = {(d["node"], d["mesh"], d["primitive"], d["material"]) for d in doc["draws"] if d["chunk"] == "glTF"}
    assert gltf == expected and len(gltf) == 2
    (unlit,) = rule_for(doc, "UNLIT")
    assert unlit["rule"].endswith(f"pbr.yaml:{rules_line('UNLIT: material.unlit')}:10")
    assert unlit["facts"] == [{"values": {"material.unlit": True}, "draws": 4}]
    assert doc["normalize"] == []  # nothing to strip: these materials have no textures
    (spec,) = rule_for(doc, "DOUBLE_SIDED")
    assert spec["mode"] == "specialization" and spec["key_value"] is None


def test_textured_unlit_key_shows_the_unlit_normalize_rule(corpus, tmp_path):
    world = corpus / "glTF-Blender-IO" / "tests" / "roundtrip" / "24_animation_pointer"
    doc = api.explain(world, UNLIT_TEXTURED, cache=tmp_path).to_json()
    expected = draws_with_material(world / "24_animation_pointer.gltf",
                                   lambda m: "KHR_materials_unlit" in m.get("extensions", {}))
    assert {(d["node"], d["mesh"], d["primitive"], d["material"]) for d in doc["draws"]} == expected
    assert len(expected) == 18
    (fired,) = doc["normalize"]
    assert fired["when"] == "UNLIT" and fired["pass"] is None and fired["draws"] == 18
    assert fired["rule"].endswith(f"pbr.yaml:{rules_line('unlit shading reads base color only')}:5")
    assert fired["description"] == "unlit shading reads base color only"
    (tangents,) = rule_for(doc, "TANGENTS")
    assert tangents["value"] is True and tangents["key_value"] is False  # derived 1, normalized to 0
    assert tangents["facts"] == [{"values": {"mesh.tangents": True}, "draws": 18}]


def test_key_by_text_and_stage_blobs_once_cooked(models, tmp_path):
    world = models / "AlphaBlendModeTest"
    before = api.explain(world, MASK_FORWARD, cache=tmp_path)
    assert [s.state for s in before.stages] == ["missing", "missing"]
    by_text = api.explain(world, before.key.text, cache=tmp_path)
    assert by_text.key == before.key
    cooked = api.cook(world, cache=tmp_path, out=tmp_path / "out", jobs=1)
    after = api.explain(world, MASK_FORWARD, cache=tmp_path).to_json()
    jobs = cooked.plan.jobs_for(before.key)
    assert {s["stage"]: s["job"] for s in after["stages"]} == jobs
    assert {s["stage"]: s["blob"] for s in after["stages"]} == {st: cooked.run.results[j].blob
                                                                 for st, j in jobs.items()}
    assert all(s["state"] == "cached" for s in after["stages"])


def test_ambiguous_prefix_lists_candidates(models, tmp_path):
    world = models / "AlphaBlendModeTest"
    keys = api.keys(world, cache=tmp_path).required.keys
    first = {}
    for key in keys:
        first.setdefault(key.hash[0], []).append(key)
    digit, shared = next((d, ks) for d, ks in sorted(first.items()) if len(ks) > 1)
    result = cli("explain", world, digit, "--cache", tmp_path)
    assert result.exit_code == 1
    assert f"{digit}: error: ambiguous hash prefix: {len(shared)} keys match" in result.stderr
    for key in shared:
        assert f"{digit}: note: candidate {key.hash[:12]} {key.text}" in result.stderr
    missing = cli("explain", world, "pbr/forward{ALPHA_MODE=MASK}", "--cache", tmp_path)
    assert missing.exit_code == 1 and "missing feature(s)" in missing.stderr
    unknown = cli("explain", world, "zzz", "--cache", tmp_path)
    assert unknown.exit_code == 1 and "not a key" in unknown.stderr


def test_cli_text_and_json(models, tmp_path):
    world = models / "AlphaBlendModeTest"
    text = cli("explain", world, MASK_FORWARD, "--cache", tmp_path)
    assert text.exit_code == 0, text.output
    assert "needed by 3 draws in 1 files, 1 chunks" in text.stdout
    assert "ALPHA_MODE = 'MASK'" in text.stdout and "material.alphaMode = 'MASK'" in text.stdout
    doc = json.loads(cli("explain", world, MASK_FORWARD, "--cache", tmp_path, "--json").stdout)
    assert set(doc) >= {"key", "hash", "draws", "rules", "normalize", "stages", "render_states"}
    assert "--json" in cli("explain", "--help").stdout


def test_the_text_is_the_json_document_rendered(models, tmp_path):
    from pipeline.cli.explain import command, render_text

    world = models / "AlphaBlendModeTest"
    run = CliRunner().invoke
    doc = json.loads(run(command, [str(world), MASK_FORWARD, "--cache", str(tmp_path), "--json"]).stdout)
    text = run(command, [str(world), MASK_FORWARD, "--cache", str(tmp_path)])
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines() == render_text(doc)
    assert render_text(doc)[:3] == [f"key   {doc['key']}", f"hash  {doc['hash']}", "needed by 3 draws in 1 files, 1 chunks"]
