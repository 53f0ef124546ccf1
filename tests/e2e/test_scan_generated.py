"""Edge cases on generated glTF files: materials, variants, scenes, optional buffer facts, grids."""

from __future__ import annotations

import base64
import copy
import struct
from pathlib import Path

import pytest

from pipeline.config import WorldConfig
from pipeline.scan import scanner
from pipeline.scan.scanner import scan_file
from pipeline.world import open_world


def scan(path, **options):
    """Scan the world of ``path`` (a world, chunk folder or file)."""
    return scanner.scan(open_world(path), **options)


def triangle(**extra) -> dict:
    """One triangle mesh on one node in one scene; ``extra`` keys override top-level entries."""
    doc = {
        "asset": {"version": "2.0"},
        "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "nodes": [{"mesh": 0}],
        "scenes": [{"nodes": [0]}],
        "scene": 0,
    }
    doc.update(copy.deepcopy(extra))
    return doc


def facts_of(path: Path, root: Path, config: WorldConfig = WorldConfig(), optional=frozenset()):
    draws, diagnostics = scan_file(path, root=root, chunk_name="c", level="c", config=config,
                                   optional_facts=frozenset(optional))
    assert not [d for d in diagnostics if d.severity == "error"], diagnostics
    return draws, diagnostics


def test_default_material_draw(tmp_path: Path, write_gltf) -> None:
    path = write_gltf(tmp_path / "c" / "a.gltf", triangle())
    (draw,), _ = facts_of(path, tmp_path)
    assert draw.source.material is None and draw.facts.material.default
    assert draw.facts.mesh.vertexCount == 3 and not draw.facts.mesh.indexed
    assert draw.source.file == "c/a.gltf"


def test_material_extensions_and_texture_sets(tmp_path: Path, write_gltf) -> None:
    material = {
        "alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": True,
        "normalTexture": {"index": 0, "texCoord": 1, "scale": 0.5},
        "occlusionTexture": {"index": 0},
        "extras": {"tag": "rock"},
        "extensions": {
            "KHR_materials_clearcoat": {"clearcoatFactor": 1.0, "clearcoatNormalTexture": {"index": 0}},
            "KHR_materials_ior": {"ior": 1.4},
            "KHR_materials_unlit": {},
            "KHR_materials_emissive_strength": {"emissiveStrength": 3.0},
            "VENDOR_custom": {"anything": [1, 2]},
        },
    }
    doc = triangle(materials=[material], textures=[{}])
    doc["meshes"][0]["primitives"][0]["material"] = 0
    (draw,), _ = facts_of(write_gltf(tmp_path / "c" / "m.gltf", doc), tmp_path)
    m = draw.facts.material
    assert (m.alphaMode, m.alphaCutoff, m.doubleSided, m.unlit, m.ior, m.emissiveStrength) == \
        ("MASK", 0.3, True, True, 1.4, 3.0)
    assert m.normalTexture.uv == 1 and m.normalTexture.scale == 0.5
    assert m.occlusionTexture.strength == 1.0 and m.occlusionTexture.scale is None
    assert m.clearcoat.clearcoatFactor == 1.0 and m.clearcoat.clearcoatNormalTexture.scale == 1.0
    assert m.maxUv == 1 and not m.textureTransform
    assert m.extensions == tuple(sorted(material["extensions"]))
    assert m.extras == {"tag": "rock"}


def test_texture_transform_texcoord_override(tmp_path: Path, write_gltf) -> None:
    info = {"index": 0, "texCoord": 0, "extensions": {"KHR_texture_transform": {"texCoord": 1, "scale": [2, 2]}}}
    doc = triangle(materials=[{"emissiveTexture": info}], textures=[{}])
    doc["meshes"][0]["primitives"][0]["material"] = 0
    (draw,), _ = facts_of(write_gltf(tmp_path / "c" / "t.gltf", doc), tmp_path)
    ref = draw.facts.material.emissiveTexture
    assert (ref.texCoord, ref.transformTexCoord, ref.uv, ref.transform) == (0, 1, 1, True)
    assert draw.facts.material.textureTransform and draw.facts.material.maxUv == 1


def test_variants_make_one_draw_each(tmp_path: Path, write_gltf) -> None:
    doc = triangle(materials=[{}, {"alphaMode": "BLEND"}, {}],
                   extensions={"KHR_materials_variants": {"variants": [{"name": "red"}, {"name": "blue"}]}})
    doc["meshes"][0]["primitives"][0].update(material=0, extensions={"KHR_materials_variants": {
        "mappings": [{"material": 1, "variants": [1]}, {"material": 2, "variants": [0]}]}})
    draws, _ = facts_of(write_gltf(tmp_path / "c" / "v.gltf", doc), tmp_path)
    assert [(d.source.variant, d.source.material) for d in draws] == [(None, 0), ("blue", 1), ("red", 2)]
    assert draws[1].facts.material.alphaMode == "BLEND"


def test_scenes_lights_mirroring_and_unreachable_nodes(tmp_path: Path, write_gltf) -> None:
    doc = triangle(
        extensions={"KHR_lights_punctual": {"lights": [{"type": "spot"}, {"type": "point"}]}},
        nodes=[
            {"children": [1], "scale": [-1, 1, 1]},
            {"mesh": 0, "matrix": [-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]},
            {"mesh": 0, "extensions": {"KHR_lights_punctual": {"light": 0}}},
            {"extensions": {"KHR_lights_punctual": {"light": 1}}},
            {"mesh": 0},
        ],
        scenes=[{"nodes": [0, 3]}, {"nodes": [2, 0]}],
    )
    draws, _ = facts_of(write_gltf(tmp_path / "c" / "s.gltf", doc), tmp_path)
    by_node = {d.source.node: d.facts for d in draws}
    assert set(by_node) == {1, 2}  # node 4 is in no scene; node 1 is drawn once
    assert by_node[1].node.mirrored is False  # two mirrors cancel
    assert (by_node[1].scene.lights.point, by_node[1].scene.lights.spot) == (1, 0)
    assert (by_node[2].scene.lights.point, by_node[2].scene.lights.spot) == (0, 1)


def test_custom_attributes_morphs_and_quantized_types(tmp_path: Path, write_gltf) -> None:
    doc = triangle()
    doc["accessors"].append({"componentType": 5121, "normalized": True, "count": 3, "type": "VEC4"})
    doc["meshes"][0]["primitives"][0].update(
        attributes={"POSITION": 0, "_TEMPERATURE": 1, "COLOR_0": 1, "TEXCOORD_0": 1, "TEXCOORD_1": 1},
        targets=[{"POSITION": 0}, {"NORMAL": 0, "POSITION": 0}], indices=1, mode=1)
    doc["meshes"][0]["weights"] = [0, 0]
    (draw,), _ = facts_of(write_gltf(tmp_path / "c" / "q.gltf", doc), tmp_path)
    mesh = draw.facts.mesh
    assert mesh.customAttributes == ("_TEMPERATURE",) and mesh.colorType == "VEC4"
    assert mesh.attributes["COLOR_0"].normalized and mesh.attributes["COLOR_0"].componentType == 5121
    assert (mesh.morphTargets, mesh.morphAttributes, mesh.mode, mesh.indexed) == (2, ("NORMAL", "POSITION"), 1, True)
    assert mesh.texcoordSets == 2 and draw.facts.node.morphWeights


def test_unknown_optional_extension_is_fine_and_no_scene_means_no_draws(tmp_path: Path, write_gltf) -> None:
    doc = triangle(extensionsUsed=["VENDOR_thing"], extensionsRequired=["KHR_draco_mesh_compression"])
    draws, _ = facts_of(write_gltf(tmp_path / "c" / "x.gltf", doc), tmp_path)
    assert len(draws) == 1
    empty = triangle()
    del empty["scenes"], empty["scene"]
    assert facts_of(write_gltf(tmp_path / "c" / "y.gltf", empty), tmp_path)[0] == []


# ---------------------------------------------------------------- optional buffer facts
OPTIONAL = frozenset({"mesh.colorAllWhite", "mesh.maxJointInfluences"})


def skinned(colors: list[float], weights: list[list[float]], uri: str | None) -> tuple[dict, bytes]:
    """A triangle with float COLOR_0 (VEC4) and WEIGHTS_0/JOINTS_0, all in one buffer."""
    positions = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
    color = struct.pack(f"<{len(colors)}f", *colors)
    weight = struct.pack("<12f", *[w for row in weights for w in row])
    joints = bytes(12)
    data = positions + color + weight + joints
    views, offset = [], 0
    for chunk in (positions, color, weight, joints):
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": len(chunk)})
        offset += len(chunk)
    buffer = {"byteLength": len(data)}
    if uri is not None:
        buffer["uri"] = uri
    doc = triangle(bufferViews=views, buffers=[buffer], skins=[{"joints": [0]}])
    doc["accessors"][0]["bufferView"] = 0
    doc["accessors"] += [
        {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC4"},
        {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"},
        {"bufferView": 3, "componentType": 5121, "count": 3, "type": "VEC4"},
    ]
    doc["meshes"][0]["primitives"][0]["attributes"].update(COLOR_0=1, WEIGHTS_0=2, JOINTS_0=3)
    doc["nodes"][0]["skin"] = 0
    return doc, data


WHITE = [1.0] * 12
WEIGHTS = [[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.3, 0.5, 0]]


def test_optional_facts_from_glb_bin_chunk(tmp_path: Path, write_gltf) -> None:
    doc, data = skinned(WHITE, WEIGHTS, None)
    path = write_gltf(tmp_path / "c" / "w.glb", doc, data)
    (draw,), _ = facts_of(path, tmp_path, optional=OPTIONAL)
    assert (draw.facts.mesh.colorAllWhite, draw.facts.mesh.maxJointInfluences) == (True, 3)
    (plain,), _ = facts_of(path, tmp_path)
    assert (plain.facts.mesh.colorAllWhite, plain.facts.mesh.maxJointInfluences) == (None, None)


def test_optional_facts_from_data_uri_and_external_file(tmp_path: Path, write_gltf) -> None:
    colors = WHITE[:-1] + [0.5]
    doc, data = skinned(colors, WEIGHTS, None)
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    (draw,), _ = facts_of(write_gltf(tmp_path / "c" / "d.gltf", doc), tmp_path, optional=OPTIONAL)
    assert draw.facts.mesh.colorAllWhite is False
    doc, data = skinned(WHITE, WEIGHTS, "bin%20file.bin")
    (tmp_path / "c" / "bin file.bin").write_bytes(data)
    (draw,), _ = facts_of(write_gltf(tmp_path / "c" / "e.gltf", doc), tmp_path, optional=OPTIONAL)
    assert draw.facts.mesh.colorAllWhite is True


def test_missing_buffer_file_leaves_buffer_facts_unknown(tmp_path: Path, write_gltf) -> None:
    doc, _ = skinned(WHITE, WEIGHTS, "missing.bin")
    (draw,), _ = facts_of(write_gltf(tmp_path / "c" / "o.gltf", doc), tmp_path, optional=OPTIONAL)
    assert (draw.facts.mesh.colorAllWhite, draw.facts.mesh.maxJointInfluences) == (None, None)


@pytest.mark.parametrize("uri, message", [("../../outside.bin", "points outside the world root"),
                                          ("/etc/passwd", "is not a relative file path"),
                                          ("file:///etc/passwd", "is not a relative file path")])
def test_buffer_uri_outside_the_world_is_a_located_error(tmp_path: Path, write_gltf, uri: str,
                                                         message: str) -> None:
    doc, data = skinned(WHITE, WEIGHTS, uri)
    (tmp_path / "outside.bin").write_bytes(data)
    world = tmp_path / "world"
    draws, diags = scan_file(write_gltf(world / "c" / "o.gltf", doc), root=world, chunk_name="c", level="c",
                             config=WorldConfig(), optional_facts=OPTIONAL)
    assert draws == [] and [d.location.pointer for d in diags] == ["/buffers/0/uri"]
    assert diags[0].severity == "error" and message in diags[0].message


# ---------------------------------------------------------------- grid chunking
def test_grid_chunking_assigns_cells_by_world_bounds(tmp_path: Path, write_gltf) -> None:
    positions = [(5, 0, 5), (70, 0, 5), (-10, 0, 130), (130, 0, -1)]
    doc = triangle(nodes=[{"mesh": 0, "translation": list(t)} for t in positions] + [
        {"children": [5], "translation": [100, 0, 100]}, {"mesh": 0, "scale": [2, 2, 2]}],
        scenes=[{"nodes": [0, 1, 2, 3, 4]}])
    write_gltf(tmp_path / "open" / "big.gltf", doc)
    write_gltf(tmp_path / "town" / "c1" / "house.gltf", triangle())
    (tmp_path / "pipeline.toml").write_text("[levels.open]\nchunking = { grid = 64.0 }\n")
    result = scan(tmp_path)
    cells = {d.source.node: d.source.chunk for d in result.draws if d.source.level == "open"}
    # cell of the bounds center: triangle spans [0,1]x[0,1]x[0,0] locally
    assert cells == {0: "open/x0_z0", 1: "open/x1_z0", 2: "open/x-1_z2", 3: "open/x2_z-1", 5: "open/x1_z1"}
    assert result.chunks == sorted({*cells.values(), "town/c1"})
    assert all(d.facts.chunk.name == d.source.chunk for d in result.draws)
    only = scan(tmp_path, chunk="open/x1_z0")
    assert [d.source.node for d in only.draws] == [1] and only.chunks == ["open/x1_z0"]


def test_level_depth_from_config(tmp_path: Path, write_gltf) -> None:
    write_gltf(tmp_path / "levels" / "forest" / "c03" / "rocks.glb", triangle())
    (tmp_path / "pipeline.toml").write_text("level_depth = 2\n")
    result = scan(tmp_path)
    assert [(d.source.chunk, d.source.level) for d in result.draws] == [("levels/forest/c03", "levels/forest")]
