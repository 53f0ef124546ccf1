"""MaterialX families (kind: materialx): graphs, shapes, documents, errors, the sample world and the corpus.

Generation runs MaterialX's own VkShaderGenerator (the ``materialx`` extra); every
compile is the real glslang + spirv-val path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("MaterialX", reason="the materialx extra is not installed")

from pipeline import api  # noqa: E402
from pipeline.builtin import builtin_materials_dir  # noqa: E402
from pipeline.compilers import SourceTree  # noqa: E402
from pipeline.plan.generate.materialx import MaterialxGenerator  # noqa: E402
from pipeline.plan.generate.mx_graph import MATERIAL, gltf_pbr_document, load_document, shape_of  # noqa: E402
from pipeline.outputs.manifest import load_chunk_manifest  # noqa: E402
from pipeline.keys.key import PermutationKey  # noqa: E402
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"
FAKE = "glTF-Asset-Generator/Output/Positive/Compatibility/Compatibility_05.gltf"
RUST = "surfaces/rust.mtlx#M_rust"


# ------------------------------------------------------------------ graphs and shapes
def test_the_gltf_pbr_graph_shape_follows_the_textures_only() -> None:
    plain, again = gltf_pbr_document(frozenset()), gltf_pbr_document(frozenset())
    textured = gltf_pbr_document(frozenset({"BASE_COLOR_MAP", "NORMAL_MAP"}))
    assert shape_of(plain.getChild(MATERIAL)) == shape_of(again.getChild(MATERIAL))
    assert shape_of(plain.getChild(MATERIAL)) != shape_of(textured.getChild(MATERIAL))
    assert textured.validate()[0], textured.validate()[1]


def test_a_value_change_in_a_document_keeps_its_shape_and_its_text(tmp_path: Path) -> None:
    text = (builtin_materials_dir() / "surfaces" / "rust.mtlx").read_text()
    recoloured = text.replace('value="0.42, 0.17, 0.07"', 'value="0.9, 0.1, 0.1"')
    assert recoloured != text
    a, b = load_document(text, "a.mtlx"), load_document(recoloured, "b.mtlx")
    assert shape_of(a.getChild("M_rust")) == shape_of(b.getChild("M_rust"))
    rewired = text.replace('<input name="roughness" type="float" nodegraph="NG_rust" output="roughness_out" />', "")
    assert shape_of(load_document(rewired, "c.mtlx").getChild("M_rust")) != shape_of(a.getChild("M_rust"))
    for name, doc_text in (("one", text), ("two", recoloured)):
        (tmp_path / name / "surfaces").mkdir(parents=True)
        (tmp_path / name / "surfaces" / "rust.mtlx").write_text(doc_text)
    made = [MaterialxGenerator(SourceTree(tmp_path / n)).generate(None, _rust_key()) for n in ("one", "two")]
    assert made[0]["fragment"].text == made[1]["fragment"].text and made[0]["fragment"].shape


def _rust_key() -> PermutationKey:
    return PermutationKey("mtlx", "forward", (("DOCUMENT", RUST),))


def test_a_colour_change_makes_no_new_key() -> None:
    found = api.keys(SAMPLE, chunk="forest/c03")
    plain = [(k, info) for k, info in found.required.keys.items() if k.shader == "mtlx"
             and dict(k.features)["DOCUMENT"] == "gltf_pbr" and not dict(k.features)["BASE_COLOR_MAP"]]
    assert len(plain) == 1
    _, info = plain[0]
    assert sorted(d.material for d in info.draws) == [3, 4], "paint_green and paint_yellow share one key"
    documents = sorted(dict(k.features)["DOCUMENT"] for k in found.required.keys if k.shader == "mtlx")
    assert documents == ["gltf_pbr", "gltf_pbr", "surfaces/glaze.mtlx#M_glaze", RUST]


# ------------------------------------------------------------------ errors
BROKEN_XML = """<?xml version="1.0"?>
<materialx version="1.39">
  <gltf_pbr name="SR_rust" type="surfaceshader">
    <input name="metallic" type="float" value="0.6">
  </gltf_pbr>
</materialx>
"""
UNKNOWN_NODE = """<?xml version="1.0"?>
<materialx version="1.39">
  <sparkle name="glitter" type="color3" />
  <gltf_pbr name="SR_glaze" type="surfaceshader">
    <input name="base_color" type="color3" nodename="glitter" />
  </gltf_pbr>
  <surfacematerial name="M_glaze" type="material">
    <input name="surfaceshader" type="surfaceshader" nodename="SR_glaze" />
  </surfacematerial>
</materialx>
"""


def test_document_errors_name_the_mtlx_file_and_every_other_draw_cooks(tmp_path: Path, monkeypatch) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE / "forest" / "c03", world / "shrine")
    shutil.copytree(builtin_materials_dir(), world / "materials")
    (world / "materials" / "surfaces" / "rust.mtlx").write_text(BROKEN_XML)
    (world / "materials" / "surfaces" / "glaze.mtlx").write_text(UNKNOWN_NODE)
    (world / "pipeline.toml").write_text('materials = "materials"\n')
    monkeypatch.chdir(world)
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    shown = sorted((e.file, e.line, e.message.split(":")[0]) for e in result.errors)
    at = f"{(world / 'materials').resolve()}/surfaces/"  # the library's files by their absolute paths
    assert shown == [(at + "glaze.mtlx", 3, "unknown node 'sparkle' of type color3"),
                     (at + "rust.mtlx", 5, "invalid MaterialX document")]
    assert any("mismatched tag" in e.message for e in result.errors)
    assert all(e.col for e in result.errors)
    manifest = load_chunk_manifest(tmp_path / "out" / "shrine.json")
    cooked = [k for k, entry in manifest.keys.items() if k.startswith("mtlx/") and "gltf_pbr" in k]
    assert len(cooked) == 2 and all(set(manifest.keys[k].stages) == {"vertex", "fragment"} for k in cooked)


def test_a_document_that_is_not_there_is_a_located_error(tmp_path: Path) -> None:
    made = MaterialxGenerator(SourceTree(tmp_path)).generate(None, _rust_key())
    (problem,) = made["fragment"].problems
    assert str(problem.location) == f"{tmp_path.resolve()}/surfaces/rust.mtlx" and "not found" in problem.message


# ------------------------------------------------------------------ end to end
def test_the_shrine_chunk_cooks_with_the_real_compiler(tmp_path: Path) -> None:
    result = api.cook(SAMPLE, chunk="forest/c03", cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    assert result.ok, result.errors
    shapes = set(result.plan.shapes.values())
    assert len(shapes) == 4  # rust, glaze, the textured slate, the two paints
    report = api.report(SAMPLE, chunk="forest/c03", cache=tmp_path / "cache")
    row = next(r for r in report.families if r.shader == "mtlx")
    assert (row.kind, row.materials, row.graph_shapes, row.required) == ("materialx", 5, 4, 4)
    assert row.unique_sources == 8 and row.unique_binaries == 8 and row.failed == 0


CORPUS_FAMILY = """shader: gltf_mx
kind: materialx
description: every draw's glTF material as a MaterialX gltf_pbr graph
features:
  DOCUMENT:               {type: name, values: [gltf_pbr]}
  BASE_COLOR_MAP:         {type: bool}
  METALLIC_ROUGHNESS_MAP: {type: bool}
  NORMAL_MAP:             {type: bool}
  OCCLUSION_MAP:          {type: bool}
  EMISSIVE_MAP:           {type: bool}
derive:
  BASE_COLOR_MAP: material.pbrMetallicRoughness.baseColorTexture is not None
  METALLIC_ROUGHNESS_MAP: material.pbrMetallicRoughness.metallicRoughnessTexture is not None
  NORMAL_MAP: material.normalTexture is not None and mesh.normals
  OCCLUSION_MAP: material.occlusionTexture is not None
  EMISSIVE_MAP: material.emissiveTexture is not None
passes:
  forward: {features: all}
"""


def corpus_world(corpus: Path, root: Path) -> Path:
    """A copy of the corpus (13 MB) whose pipeline.toml configures only the MaterialX family."""
    shutil.copytree(corpus, root, symlinks=True)
    (root / "gltf_mx_rules").mkdir()
    (root / "gltf_mx_rules" / "gltf_mx.yaml").write_text(CORPUS_FAMILY)
    (root / "pipeline.toml").write_text('rules = "gltf_mx_rules"\n')
    return root


@pytest.mark.slow
def test_the_corpus_cooks_every_material_through_gltf_pbr_graphs(corpus: Path, tmp_path: Path) -> None:
    world = corpus_world(corpus, tmp_path / "world")
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=2)
    assert [e.file for e in result.errors] == [FAKE]
    assert all(r.ok for r in result.run.results.values()) and result.plan.shapes
    stages = result.plan.stage_report()  # graphs of one vertex interface share their vertex source
    assert stages["vertex"]["jobs"] < stages["fragment"]["jobs"] == len(set(result.plan.shapes.values()))
    report = api.report(world, cache=tmp_path / "cache").to_json()
    (row,) = [r for r in report["totals"] if r["shader"] == "gltf_mx"]
    assert row["materials"] > row["graph_shapes"] > 1
    assert row["unique_sources"] == len(result.plan.jobs) and row["unique_binaries"] <= row["unique_sources"]
    assert row["failed"] == 0 and row["missing"] == 0
    (tmp_path / "report.json").write_text(json.dumps(row))


def test_without_the_materialx_package_the_family_fails_with_a_located_reason(monkeypatch, tmp_path) -> None:
    import sys

    from pipeline.plan.generate import generator_for
    monkeypatch.setitem(sys.modules, "pipeline.plan.generate.materialx", None)  # as if MaterialX were absent
    family = api.open_world(SAMPLE).families["mtlx"]
    made = generator_for(family, SourceTree(tmp_path)).generate(family, _rust_key())
    (problem,) = made["fragment"].problems
    assert str(problem.location) == "rules/mtlx.yaml" or problem.location.file.endswith("rules/mtlx.yaml")
    assert "pip install 'materialx" in problem.message


def test_a_document_outside_the_materials_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "materials").mkdir()
    shutil.copy(builtin_materials_dir() / "surfaces" / "rust.mtlx", tmp_path / "secret.mtlx")
    key = PermutationKey("mtlx", "forward", (("DOCUMENT", "../secret.mtlx#M_rust"),))
    made = MaterialxGenerator(SourceTree(tmp_path / "materials")).generate(None, key)
    (problem,) = made["fragment"].problems
    assert made["fragment"].text is None and "outside the allowed roots" in problem.message
