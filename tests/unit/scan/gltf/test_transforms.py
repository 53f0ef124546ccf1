"""Handedness of local transforms and world matrices."""

from __future__ import annotations

import math

import msgspec
import numpy as np

from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.transforms import local_det_sign, local_matrix, world_bounds, world_matrices


def test_determinant_sign_from_scale_or_matrix() -> None:
    assert local_det_sign({}) == 1
    assert local_det_sign({"scale": [1, -2, 1]}) == -1
    assert local_det_sign({"scale": [1, 0, 1]}) == 0
    mirror_x = [-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 5, 6, 7, 1]
    assert local_det_sign({"matrix": mirror_x, "scale": [1, 1, 1]}) == -1  # the matrix wins


def test_local_matrix_is_t_r_s_and_column_major_matrices_are_transposed() -> None:
    half = math.sqrt(0.5)
    m = local_matrix({"translation": [1, 2, 3], "rotation": [0, 0, half, half], "scale": [2, 1, 1]})
    assert np.allclose(m @ [1, 0, 0, 1], [1, 4, 3, 1])  # x scaled by 2, turned 90 degrees about z to +y
    column_major = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 5, 6, 7, 1]
    assert np.allclose(local_matrix({"matrix": column_major})[:3, 3], [5, 6, 7])


def test_world_matrices_compose_down_the_tree_first_scene_wins() -> None:
    doc = msgspec.convert({"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}, {"nodes": [1]}],
                           "nodes": [{"translation": [1, 0, 0], "children": [1]}, {"translation": [0, 2, 0]}, {}]},
                          S.Document)
    worlds = world_matrices(doc)
    assert sorted(worlds) == [0, 1]  # node 2 is in no scene
    assert np.allclose(worlds[1][:3, 3], [1, 2, 0])


def test_world_bounds_of_a_box() -> None:
    turn = np.array([[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)
    lo, hi = world_bounds(turn, [0, 0, 0], [2, 1, 1])
    assert np.allclose(lo, [-1, 0, 0]) and np.allclose(hi, [0, 2, 1])
