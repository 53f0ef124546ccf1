"""Grid cells: a node instance goes to the cell holding the center of its world bounds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.scan.gltf.draws import instances
from pipeline.scan.gltf.grid import cell_name, grid_chunk_of, node_center
from pipeline.scan.gltf.reader import parse_gltf


def gltf(nodes: list, bounds: bool = True):
    accessor = {"componentType": 5126, "count": 3, "type": "VEC3"}
    if bounds:
        accessor |= {"min": [0, 0, 0], "max": [2, 2, 2]}
    doc = {"asset": {"version": "2.0"}, "scenes": [{"nodes": list(range(len(nodes)))}], "nodes": nodes,
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}], "accessors": [accessor]}
    return parse_gltf(json.dumps(doc).encode(), Path("f.gltf"), "f.gltf", Limits())


def test_cell_names_floor_x_and_z() -> None:
    assert cell_name("town", (15.0, 99.0, -0.5), 10.0) == "town/x1_z-1"


def test_the_center_of_world_bounds_or_the_origin() -> None:
    moved = gltf([{"mesh": 0, "translation": [10, 0, 20]}])
    assert np.allclose(node_center(moved, 0, np.eye(4)), [1, 1, 1])
    no_bounds = gltf([{"mesh": 0}], bounds=False)
    world = np.eye(4)
    world[:3, 3] = [4, 5, 6]
    assert np.allclose(node_center(no_bounds, 0, world), [4, 5, 6])


def test_chunk_of_each_instance() -> None:
    doc = gltf([{"mesh": 0, "translation": [10, 0, 20]}, {"mesh": 0, "translation": [-3, 0, 0]}])
    chunk_of = grid_chunk_of(doc, "town", 8.0)
    assert [chunk_of(i) for i in instances(doc.doc)] == [("town/x1_z2", "town"), ("town/x-1_z0", "town")]


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_a_position_that_is_not_finite_is_located() -> None:
    doc = gltf([{"mesh": 0, "scale": [1e308, 1, 1], "translation": [1e308, 0, 0]}])
    with pytest.raises(GltfError, match="world-space position is not finite") as caught:
        grid_chunk_of(doc, "town", 8.0)(instances(doc.doc)[0])
    assert caught.value.diagnostics[0].location.pointer == "/nodes/0"
