"""Cooked outputs on a real Vulkan driver (Mesa lavapipe) with the Khronos validation layer on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import trimesh
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.outputs import manifest as mf
from pipeline.structs import replace

from runtime_helpers import SAMPLE, chunk_index, cook, needs_vulkan  # noqa: E402
from runtime_oracle import iou, silhouette, triangles  # noqa: E402

pytestmark = needs_vulkan
SIZE = (384, 384)


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory) -> Path:
    return cook(SAMPLE, tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def corpus_out(corpus, tmp_path_factory) -> Path:
    return cook(corpus, tmp_path_factory.mktemp("corpus"))


# ------------------------------------------------------------------ check
@pytest.mark.slow
def test_check_sample_world_creates_every_pipeline_without_validation_messages(sample_out: Path) -> None:
    run = CliRunner().invoke(main, ["runtime", "check", str(sample_out), "--json"])
    assert run.exit_code == 0, run.output
    doc = json.loads(run.stdout)
    manifests = [mf.load_chunk_manifest(p) for p in sample_out.rglob("*.json") if ".level." not in p.name]
    states = {pid for m in manifests for pid in m.pipelines}
    assert doc["pipelines"] == doc["created"] == len(states) > 30
    assert doc["validation_errors"] == [] and doc["failed"] == []
    assert doc["modules"] == len({d for m in manifests for d in mf.module_hashes(m)})


@pytest.mark.slow
def test_check_corpus(corpus_out: Path) -> None:
    result = api.runtime_check(corpus_out)
    assert result.pipelines == result.created > 150
    assert [f.to_json() for f in result.validation_errors] == [] and [f.to_json() for f in result.failed] == []


def test_check_one_chunk(sample_out: Path) -> None:
    result = api.runtime_check(sample_out, chunk="forest/c00")
    assert result.chunks == ["forest/c00"] and result.ok
    assert result.pipelines == len(chunk_index(sample_out, "forest/c00").pipelines)


def test_check_reports_a_pipeline_state_the_shaders_do_not_match(sample_out: Path, tmp_path: Path) -> None:
    """A vertex layout that feeds no NORMAL to a vertex stage reading it: the layer must say so."""
    out = tmp_path / "out"
    (out / "forest").mkdir(parents=True)
    shutil.copy(mf.library_path(sample_out), mf.library_path(out))
    manifest = chunk_index(sample_out, "forest/c00")
    pid, state = next((pid, s) for pid, s in sorted(manifest.pipelines.items()) if "forward" in s["key"])
    state = {**state, "vertex_layout": [a for a in state["vertex_layout"] if a["location"] != 1]}
    manifest = replace(manifest, pipelines={**manifest.pipelines, pid: state})
    mf.chunk_manifest_path(out, "forest/c00").write_bytes(mf.dump_json(manifest.to_json()))
    (broken,) = [p for p, s in chunk_index(out, "forest/c00").pipelines.items() if s == state]  # ids: by content
    run = CliRunner().invoke(main, ["runtime", "check", str(out), "--json"])
    assert run.exit_code == 1
    report = json.loads(run.stdout)
    assert report["validation_errors"] and all(e["pipeline"] == broken for e in report["validation_errors"])
    assert "location 1" in report["validation_errors"][0]["message"].lower() or \
        "Location 1" in report["validation_errors"][0]["message"]


@pytest.mark.slow
def test_check_reports_a_corrupt_library_for_every_chunk_and_a_bad_index_for_its_chunk(sample_out: Path,
                                                                                     tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(sample_out, out)
    mf.chunk_manifest_path(out, "town/market").write_bytes(b"{ not an index")
    result = api.runtime_check(out)
    assert [f.chunk for f in result.failed] == ["town/market"]  # the other chunks are still checked
    assert result.created > 0 and not result.validation_errors
    mf.library_path(out).write_bytes(b"not a pak")  # the one library: no chunk can load, each says why
    result = api.runtime_check(out)
    chunks = sorted(p.relative_to(out).with_suffix("").as_posix() for p in out.rglob("*.json")
                    if not p.name.endswith(".level.json"))
    assert sorted(f.chunk for f in result.failed) == chunks and result.created == 0
    assert all("shaders.pak" in f.message for f in result.failed if f.chunk != "town/market")


# ------------------------------------------------------------------ render
MODELS = {
    "static": "glTF-Sample-Assets/Models/Box/glTF-Binary/Box.glb",
    "skinned+textured": "glTF-Sample-Assets/Models/Fox/glTF-Binary/Fox.glb",
    "skinned": "glTF-Sample-Assets/Models/RiggedFigure/glTF-Binary/RiggedFigure.glb",
    "morphed": "glTF-Sample-Assets/Models/MorphPrimitivesTest/glTF-Binary/MorphPrimitivesTest.glb",
    "morphed cube": "glTF-Sample-Assets/Models/AnimatedMorphCube/glTF-Binary/AnimatedMorphCube.glb",
    "alpha-masked": "glTF-Asset-Generator/Output/Positive/Material_AlphaMask/Material_AlphaMask_05.gltf",
    "textured": "glTF-Sample-Assets/Models/TextureCoordinateTest/glTF-Binary/TextureCoordinateTest.glb",
    "instanced": "glTF-Sample-Assets/Models/SimpleInstancing/glTF-Binary/SimpleInstancing.glb",
}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_render_silhouette_matches_an_independent_projection(kind: str, corpus: Path, corpus_out: Path,
                                                              tmp_path: Path) -> None:
    file = MODELS[kind]
    result = api.runtime_render(corpus, file, out=corpus_out, size=SIZE)
    assert result.validation_messages == [] and result.not_drawn == [] and result.fallbacks == 0
    assert result.drawn > 0 and result.mask.sum() > 2000
    expected = silhouette(triangles(corpus / file), result.view_projection, SIZE)
    assert iou(result.mask, expected) >= 0.98


def test_render_alpha_test_discards_below_the_cutoff(corpus: Path, corpus_out: Path) -> None:
    """Same quad: cutoff 0.4 under alpha 0.7 keeps it (above), cutoff 1.1 discards every fragment."""
    folder = "glTF-Asset-Generator/Output/Positive/Material_AlphaMask/"
    kept = api.runtime_render(corpus, folder + "Material_AlphaMask_05.gltf", out=corpus_out, size=SIZE)
    gone = api.runtime_render(corpus, folder + "Material_AlphaMask_03.gltf", out=corpus_out, size=SIZE)
    assert kept.mask.sum() > 2000 and gone.drawn == 1 and gone.mask.sum() == 0
    assert gone.validation_messages == []


def test_render_static_model_matches_trimesh(corpus: Path, corpus_out: Path) -> None:
    file = MODELS["static"]
    result = api.runtime_render(corpus, file, out=corpus_out, size=SIZE)
    mesh = trimesh.load(corpus / file, force="scene").to_geometry()
    expected = silhouette([(np.asarray(mesh.vertices), np.asarray(mesh.faces))], result.view_projection, SIZE)
    assert iou(result.mask, expected) >= 0.98


def test_render_samples_the_base_color_texture(corpus: Path, corpus_out: Path) -> None:
    """The fox's texture is orange fur with white and black parts: a textured render is not one flat colour."""
    result = api.runtime_render(corpus, MODELS["skinned+textured"], out=corpus_out, size=SIZE)
    colors = result.image[result.mask][:, :3].astype(float)
    hue_spread = (colors[:, 0] - colors[:, 2]).std()
    assert hue_spread > 10 and colors[:, 0].mean() > colors[:, 2].mean() + 20


def test_render_cli_writes_a_png(sample_out: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "cabin.png"
    run = CliRunner().invoke(main, ["runtime", "render", str(SAMPLE), "forest/c02/cabin.gltf", "-o", str(png),
                                    "--out", str(sample_out), "--size", "128x96", "--json"])
    assert run.exit_code == 0, run.output
    doc = json.loads(run.stdout)
    assert doc["drawn"] > 0 and doc["validation_messages"] == []
    with Image.open(png) as img:
        assert img.size == (128, 96) and img.mode == "RGBA"
        assert (np.asarray(img)[:, :, 3] > 0).sum() == doc["covered_pixels"] > 0


def test_render_of_a_file_outside_the_world_is_a_located_error(sample_out: Path, tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["runtime", "render", str(SAMPLE), "forest/c00/nothing.gltf",
                                    "-o", str(tmp_path / "x.png"), "--out", str(sample_out)])
    assert run.exit_code == 1 and "forest/c00/nothing.gltf" in run.output and "error" in run.output
