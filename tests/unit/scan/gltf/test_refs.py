"""Cross-references and the node hierarchy."""

from __future__ import annotations

import pytest

from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.decode import from_python
from pipeline.scan.gltf.refs import check_refs

ACCESSOR = {"componentType": 5126, "count": 3, "type": "VEC3"}


def doc(**parts) -> S.Document:
    return from_python({"asset": {"version": "2.0"}, **parts})


def error(**parts) -> str:
    with pytest.raises(GltfError) as caught:
        check_refs(doc(**parts), "f")
    return str(caught.value)


def mesh(**primitive) -> list:
    return [{"primitives": [{"attributes": {"POSITION": 0}} | primitive]}]


def test_a_consistent_document_passes() -> None:
    check_refs(doc(scenes=[{"nodes": [0]}], nodes=[{"children": [1]}, {"mesh": 0, "skin": 0}], skins=[{"joints": [1]}],
                   meshes=mesh(indices=0, material=0, targets=[{"POSITION": 0}]), materials=[{}],
                   accessors=[ACCESSOR]), "f")


def test_dangling_indices() -> None:
    assert error(nodes=[{"mesh": 0}]) == "f: /nodes/0/mesh: error: mesh 0 does not exist"
    assert error(scene=2) == "f: /scene: error: scene 2 does not exist"
    assert error(meshes=mesh(), accessors=[]) == (
        "f: /meshes/0/primitives/0/attributes/POSITION: error: accessor 0 does not exist")
    assert error(meshes=mesh(material=1), accessors=[ACCESSOR], materials=[{}]) == (
        "f: /meshes/0/primitives/0/material: error: material 1 does not exist")
    assert error(nodes=[{}], skins=[{"joints": [0, 4]}]) == "f: /skins/0/joints/1: error: node 4 does not exist"
    assert error(nodes=[{"extensions": {"KHR_lights_punctual": {"light": 0}}}]) == (
        "f: /nodes/0/extensions/KHR_lights_punctual/light: error: light 0 does not exist")


def test_variants_must_exist() -> None:
    mapping = {"KHR_materials_variants": {"mappings": [{"material": 0, "variants": [1]}]}}
    root = {"KHR_materials_variants": {"variants": [{"name": "a"}]}}
    assert error(meshes=mesh(extensions=mapping), accessors=[ACCESSOR], materials=[{}], extensions=root) == (
        "f: /meshes/0/primitives/0/extensions/KHR_materials_variants/mappings/0/variants/0: error: "
        "variant 1 does not exist")


def test_color_0_must_be_vec3_or_vec4() -> None:
    scalar = ACCESSOR | {"type": "SCALAR"}
    assert error(meshes=[{"primitives": [{"attributes": {"COLOR_0": 0}}]}], accessors=[scalar]) == (
        "f: /meshes/0/primitives/0/attributes/COLOR_0: error: COLOR_0 must be VEC3 or VEC4, accessor 0 is SCALAR")


def test_the_hierarchy_is_a_forest() -> None:
    assert error(nodes=[{"children": [1]}, {"children": [0]}]) == (
        "f: /nodes/0/children/0: error: nodes [0, 1] form a cycle")
    assert error(nodes=[{"children": [0]}]) == "f: /nodes/0/children/0: error: node 0 already has a parent (node 0)"
    assert error(nodes=[{"children": [2]}, {"children": [2]}, {}]) == (
        "f: /nodes/1/children/0: error: node 2 already has a parent (node 0)")
    assert error(nodes=[{"children": [1]}, {}], scenes=[{"nodes": [1]}]) == (
        "f: /scenes/0/nodes/0: error: node 1 is not a root node (it is a child of node 0)")
