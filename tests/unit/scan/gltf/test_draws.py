"""A document to draws: instances, variants, mesh, node and scene facts."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import Limits
from pipeline import facts as F
from pipeline.scan.gltf.draws import (
    SharedFacts, chunk_lights, draws_of, instances, mesh_values, node_key, node_values,
)
from pipeline.scan.gltf.reader import parse_gltf

ACCESSOR = {"componentType": 5126, "count": 3, "type": "VEC3"}
DOC = {
    "asset": {"version": "2.0"}, "scene": 0,
    "scenes": [{"nodes": [0]}, {"nodes": [2]}],
    "nodes": [{"children": [1], "scale": [-1, 1, 1]}, {"mesh": 0},
              {"mesh": 0, "extensions": {"KHR_lights_punctual": {"light": 0}}}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1, "COLOR_0": 0}, "material": 0,
                                "extensions": {"KHR_materials_variants": {"mappings": [
                                    {"material": 1, "variants": [0]}]}}}]}],
    "materials": [{}, {"alphaMode": "BLEND"}],
    "accessors": [ACCESSOR, ACCESSOR | {"type": "VEC2"}],
    "extensions": {"KHR_materials_variants": {"variants": [{"name": "night"}]},
                   "KHR_lights_punctual": {"lights": [{"type": "spot"}]}},
}


def gltf(doc: dict = DOC):
    return parse_gltf(json.dumps(doc).encode(), Path("f.gltf"), "f.gltf", Limits())


def chunk_of(inst):
    return "lvl/c", "lvl"


def test_instances_in_scene_order_with_mirroring() -> None:
    found = instances(gltf().doc)
    assert [(i.node, i.scene, i.mirrored) for i in found] == [(0, 0, True), (1, 0, True), (2, 1, False)]
    assert [i.node for i in instances(gltf().doc, "default")] == [0, 1]


def test_one_draw_per_primitive_and_variant() -> None:
    draws = draws_of(gltf(), chunk_of)
    assert [(d.node, d.material, d.variant) for d in draws] == [
        (1, 0, None), (1, 1, "night"), (2, 0, None), (2, 1, "night")]
    assert draws[1].facts.material.alphaMode == "BLEND" and draws[0].facts.node.mirrored is True
    assert draws[0].facts.chunk.name == "lvl/c" and draws[0].facts.scene.lights.spot == 0
    assert draws[2].facts.scene.lights.spot == 1


def test_equal_facts_are_shared_objects() -> None:
    shared = SharedFacts()
    one, two = draws_of(gltf(), chunk_of, shared=shared), draws_of(gltf(), chunk_of, shared=shared)
    assert one[0].facts.mesh is two[0].facts.mesh and one[0].signature == two[0].signature


def test_mesh_and_node_values() -> None:
    doc = gltf().doc
    values = mesh_values(doc, 0, 0, {})
    assert (values["vertexCount"], values["texcoordSets"], values["colorType"], values["indexed"]) == (
        3, 1, "VEC3", False)
    assert node_values(doc, doc.nodes[1], mirrored=False)["skin"] is False


def test_lights_by_chunk() -> None:
    assert chunk_lights(gltf().doc, chunk_of) == (("lvl/c", 0, 0, 1),)


def test_primitives_naming_the_same_accessors_build_their_mesh_facts_once() -> None:
    doc = json.loads(json.dumps(DOC))
    prim = {"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "material": 0}
    doc["meshes"] = [{"primitives": [prim, prim, dict(prim, mode=1)]}, {"primitives": [prim]}]
    doc["nodes"] = [{"mesh": 0}, {"mesh": 1}]
    doc["scenes"] = [{"nodes": [0, 1]}]
    asked = []
    draws = draws_of(gltf(doc), chunk_of, lambda m, p: asked.append((m, p)) or {"maxJointInfluences": m})
    assert asked == [(0, 0), (0, 2)]  # (0, 1) and (1, 0) name what (0, 0) names
    assert draws[0].facts.mesh is draws[1].facts.mesh is draws[3].facts.mesh
    assert draws[2].facts.mesh.mode == 1 and draws[3].facts.mesh.maxJointInfluences == 0
    assert [d.signature for d in draws] == [d.facts.signature() for d in draws]
    assert draws[0].facts.scene.materials.draws == 4


def test_node_key_is_node_values_in_the_facts_field_order() -> None:
    doc = gltf().doc
    assert tuple(F.fact_fields(F.NodeFacts)) == tuple(node_values(doc, doc.nodes[1], True))
    for n in (1, 2):
        for mirrored in (False, True):
            values = node_values(doc, doc.nodes[n], mirrored)
            assert node_key(doc, doc.nodes[n], mirrored) == tuple(values.values())
            assert values["mirrored"] is mirrored and values["morphWeights"] is False
