"""Facts a studio's ubershader reads: per-scene aggregates, scene identity, morph data, variants.

Built from one small glTF written here: two scenes (the second is the default), a
transmissive material drawn only in the second, lights by type, morph targets whose
attributes come POSITION first, node weights, a custom attribute and a variant.
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import WorldConfig, parse_world_config
from pipeline.rules.lint import lint_ruleset
from pipeline.scan.files import scan_file
from robust_helpers import DATA_URI, POSITIONS
from rules_fixtures import ruleset_from


def _doc() -> dict:
    vec3 = {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"}
    return {
        "asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_lights_punctual", "KHR_materials_variants", "KHR_materials_transmission"],
        "extensions": {
            "KHR_lights_punctual": {"lights": [{"type": "point"}, {"type": "spot", "spot": {}},
                                               {"type": "directional"}]},
            "KHR_materials_variants": {"variants": [{"name": "glass"}]},
        },
        "scene": 1,
        "scenes": [{"nodes": [0]}, {"nodes": [1, 2, 3]}],
        "nodes": [
            {"mesh": 0},
            {"mesh": 1, "weights": [0.5, 0.25, 0.0]},
            {"mesh": 2},
            {"extensions": {"KHR_lights_punctual": {"light": 0}},
             "children": [4]},
            {"extensions": {"KHR_lights_punctual": {"light": 0}}},
        ],
        "meshes": [
            {"primitives": [{"attributes": {"POSITION": 0, "_PRESSURE": 1}, "material": 0,
                             "extensions": {"KHR_materials_variants": {"mappings": [
                                 {"material": 1, "variants": [0]}]}}}]},
            {"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 2}, "material": 0,
                             "targets": [{"POSITION": 2}, {"NORMAL": 2, "POSITION": 2}, {"NORMAL": 2}]}],
             "weights": [0, 0]},
            {"primitives": [{"attributes": {"POSITION": 0}, "material": 1}]},
        ],
        "materials": [{"name": "plain"},
                      {"name": "glass", "alphaMode": "BLEND",
                       "extensions": {"KHR_materials_transmission": {"transmissionFactor": 1}}}],
        "accessors": [vec3 | {"min": [0, 0, 0], "max": [1, 1, 0]},
                      {"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR"},
                      vec3],
        "bufferViews": [{"buffer": 0, "byteLength": len(POSITIONS)}],
        "buffers": [{"byteLength": len(POSITIONS), "uri": DATA_URI}],
    }


def _draws(tmp_path: Path, config: WorldConfig = WorldConfig()):
    path = tmp_path / "scenes.gltf"
    path.write_text(json.dumps(_doc()))
    draws, diagnostics = scan_file(path, root=tmp_path, chunk_name=".", level=".", config=config)
    assert [d for d in diagnostics if d.severity == "error"] == []
    return draws


def test_scene_identity_aggregates_and_lights(tmp_path: Path) -> None:
    draws = _draws(tmp_path)
    by_node = {}
    for d in draws:
        by_node.setdefault(d.source.node, []).append(d)
    first, morphed = by_node[0][0].facts, by_node[1][0].facts
    assert (first.scene.index, first.scene.default) == (0, False)
    assert (morphed.scene.index, morphed.scene.default) == (1, True)
    # scene 0 draws the plain material and, as a variant, the glass one: both count
    assert first.scene.materials.transmission is True
    assert first.scene.materials.draws == 2
    assert first.scene.materials.alphaModes == ("BLEND", "OPAQUE")
    assert morphed.scene.materials.transmission is True
    assert morphed.scene.materials.extensions == ("KHR_materials_transmission",)
    assert (first.scene.lights.point, first.scene.lights.spot) == (0, 0)
    assert (morphed.scene.lights.point, morphed.scene.lights.spot, morphed.scene.lights.directional) == (2, 0, 0)


def test_variant_of_each_draw(tmp_path: Path) -> None:
    node0 = [d for d in _draws(tmp_path) if d.source.node == 0]
    assert [(d.source.variant, d.facts.draw.variant, d.facts.material.transmission is not None)
            for d in node0] == [(None, None, False), ("glass", "glass", True)]


def test_morph_attributes_in_file_order_and_counts(tmp_path: Path) -> None:
    facts = next(d for d in _draws(tmp_path) if d.source.node == 1).facts
    assert facts.mesh.morphTargetAttributes == ("POSITION", "NORMAL")
    assert facts.mesh.morphAttributes == ("NORMAL", "POSITION")  # the sorted form stays
    assert facts.mesh.morphVertexCount == 3
    assert facts.node.morphWeightCount == 3  # node.weights wins over mesh.weights
    mesh_weights = next(d for d in _draws(tmp_path) if d.source.node == 0).facts
    assert mesh_weights.node.morphWeightCount == 0 and mesh_weights.mesh.morphVertexCount is None


def test_custom_attribute_keeps_its_accessor_type(tmp_path: Path) -> None:
    facts = next(d for d in _draws(tmp_path) if d.source.node == 0).facts
    assert facts.mesh.attributes["_PRESSURE"].type == "SCALAR"


def test_scenes_default_draws_only_the_default_scene(tmp_path: Path) -> None:
    config = parse_world_config('scenes = "default"\n')
    nodes = sorted({d.source.node for d in _draws(tmp_path, config)})
    assert nodes == [1, 2]
    assert sorted({d.source.node for d in _draws(tmp_path)}) == [0, 1, 2]


def test_bad_scenes_option_is_located() -> None:
    try:
        parse_world_config('level_depth = 1\nscenes = "every"\n')
    except Exception as exc:  # ConfigError
        assert "pipeline.toml:2:" in str(exc) and "scenes" in str(exc)
    else:
        raise AssertionError("scenes = 'every' was accepted")


def test_rules_check_counts_skip_when_as_a_read() -> None:
    rs = ruleset_from({
        "shader": "s", "sources": {"vertex": "a.vert", "fragment": "a.frag"},
        "features": {"A": {"type": "bool"}, "SCENE_T": {"type": "bool"}, "UNUSED": {"type": "bool"}},
        "derive": {"A": "material.unlit", "SCENE_T": "scene.materials.transmission", "UNUSED": "mesh.normals"},
        "passes": {"forward": {"features": ["A"]},
                   "second": {"features": ["A"], "skip_when": "not SCENE_T"}},
    })
    unread = [d.message for d in lint_ruleset(rs) if "read by no pass" in d.message]
    assert unread == ["feature 'UNUSED' is read by no pass"]
