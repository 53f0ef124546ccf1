"""The std140 uniform blocks of the pbr family, read back field by field at their offsets."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from pipeline.runtime.uniforms import (
    FRAME_SIZE,
    LIGHT_SIZE,
    MATERIAL_SIZE,
    OBJECT_SIZE,
    frame_block,
    light_block,
    material_block,
    object_block,
)

VIEW = np.arange(16, dtype=float).reshape(4, 4) + 1.0
PROJECTION = np.diag([2.0, 3.0, 4.0, 1.0]) + np.triu(np.ones((4, 4)), 1)


def floats(data: bytes, offset: int, n: int) -> tuple[float, ...]:
    return struct.unpack_from(f"<{n}f", data, offset)


def matrix(data: bytes, offset: int) -> np.ndarray:
    """A std140 mat4 (16 floats, column after column) as a row-major numpy matrix."""
    return np.array(floats(data, offset, 16)).reshape(4, 4, order="F")


def test_frame_block_stores_matrices_by_columns_and_the_view_projection_product() -> None:
    eye, light = np.array([1.0, 2.0, 3.0]), np.array([0.0, -1.0, 0.0])
    data = frame_block(VIEW, PROJECTION, eye, (64, 32), light)
    assert len(data) == FRAME_SIZE
    assert np.allclose(matrix(data, 0), VIEW)
    assert np.allclose(matrix(data, 64), PROJECTION)
    assert np.allclose(matrix(data, 128), PROJECTION @ VIEW)
    assert floats(data, 192, 4) == (1.0, 2.0, 3.0, 1.0)
    assert floats(data, 208, 4) == pytest.approx((64.0, 32.0, 1 / 64, 1 / 32))
    assert floats(data, 224, 4) == (0.0, -1.0, 0.0, 0.0)
    assert data[-8:] == bytes(8)  # padded with zeros to the block size


def test_light_block_holds_one_directional_light_and_the_ambient_term() -> None:
    direction = np.array([0.5, -0.5, 0.25])
    data = light_block(direction, intensity=2.5, ambient=0.2)
    assert len(data) == LIGHT_SIZE
    assert floats(data, 0, 4) == pytest.approx((0.2, 0.2, 0.2, 0.0))
    assert data[16:144] == bytes(128)  # the other spherical-harmonics terms stay zero
    assert struct.unpack_from("<i", data, 144) == (1,)  # one light
    assert floats(data, 176, 4) == pytest.approx((0.5, -0.5, 0.25, 2.5))
    assert floats(data, 192, 3) == (1.0, 1.0, 1.0)  # white


def test_object_block_normal_matrix_is_the_inverse_transpose() -> None:
    model = np.array([[2.0, 0, 0, 1], [0, 1, 0, 2], [0, 0, 4, 3], [0, 0, 0, 1]])
    data = object_block(model, morph_vertex_count=7, morph_normal_offset=14, morph_tangent_offset=28)
    assert len(data) == OBJECT_SIZE
    assert np.allclose(matrix(data, 0), model)
    normal = matrix(data, 64)
    assert np.allclose(normal.T @ model, np.eye(4))
    assert struct.unpack_from("<4I", data, 128) == (0, 7, 14, 28)


def test_object_block_of_a_flat_model_gets_the_identity_normal_matrix() -> None:
    flat = np.diag([1.0, 0.0, 1.0, 1.0])  # not invertible
    assert np.allclose(matrix(object_block(flat), 64), np.eye(4))


def test_material_block_of_the_default_material() -> None:
    data = material_block({}, {})
    assert len(data) == MATERIAL_SIZE
    assert floats(data, 0, 4) == (1.0, 1.0, 1.0, 1.0)
    assert floats(data, 16, 4) == (0.0, 0.0, 0.0, 1.0)
    assert floats(data, 32, 4) == (1.0, 1.0, 1.0, 1.0)
    cutoff, ior, flags, mode = struct.unpack_from("<2f2I", data, 48)
    assert (cutoff, flags, mode) == (0.0, 0, 0)
    assert struct.unpack_from("<20i", data, 176) == (-1,) * 20
    identity = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0)
    assert all(floats(data, 256 + 48 * i, 12) == identity for i in range(18))


def test_material_block_flags_factors_and_uv_sets() -> None:
    material = {"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.25, 0.125, 0.75], "metallicFactor": 0.0,
                                         "roughnessFactor": 0.5, "baseColorTexture": {"index": 0, "texCoord": 1}},
                "normalTexture": {"index": 1, "scale": 0.5}, "occlusionTexture": {"index": 2, "strength": 0.25},
                "emissiveFactor": [1.0, 0.5, 0.0], "alphaMode": "MASK", "alphaCutoff": 0.25, "doubleSided": True}
    data = material_block(material, {})
    assert floats(data, 0, 4) == (0.5, 0.25, 0.125, 0.75)
    assert floats(data, 16, 3) == (1.0, 0.5, 0.0)
    assert floats(data, 32, 4) == (0.0, 0.5, 0.5, 0.25)
    cutoff, _, flags, mode = struct.unpack_from("<2f2I", data, 48)
    assert cutoff == 0.25 and mode == 1
    assert flags == (1 << 0) | (1 << 2) | (1 << 3) | (1 << 15)  # base color, normal, occlusion, double sided
    tex = struct.unpack_from("<20i", data, 176)
    assert tex[:5] == (1, -1, 0, 0, -1) and set(tex[5:]) == {-1}


@pytest.mark.parametrize("mode, code", [("OPAQUE", 0), ("BLEND", 2), ("SOMETHING_ELSE", 0)])
def test_material_block_alpha_cutoff_only_applies_to_mask(mode: str, code: int) -> None:
    cutoff, _, _, got = struct.unpack_from("<2f2I", material_block({"alphaMode": mode, "alphaCutoff": 0.9}, {}), 48)
    assert (cutoff, got) == (0.0, code)
