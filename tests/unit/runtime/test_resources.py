"""GPU resources of a render on lavapipe: buffers, textures (copied back), samplers, pools, cleanup."""

from __future__ import annotations

import numpy as np
import pytest

from runtime_helpers import needs_vulkan
from pipeline.runtime.device import Device
from pipeline.runtime.resources import Resources

pytestmark = needs_vulkan


def test_buffers_hold_their_bytes_and_unknown_usages_are_refused() -> None:
    with Device(validation=True) as device:
        res = Resources(device)
        try:
            data = bytes(range(10))
            buf = res.buffer(data, "uniform")
            assert device.read(buf)[:10] == data and buf.size >= 10
            zeros = res.buffer(16, "readback")
            assert device.read(zeros) == bytes(16)
            with pytest.raises(KeyError):
                res.buffer(b"x", "indirect")
            assert res.buffers == [buf, zeros]
        finally:
            res.close()
        assert res.buffers == []
    assert device.messages == []


@pytest.mark.parametrize("cube, layers", [(False, 1), (True, 6)])
def test_a_texture_is_staged_from_its_pixels_once_per_layer(cube: bool, layers: int) -> None:
    height = 2 if cube else 3  # a cube's faces are square
    pixels = (np.arange(height * 2 * 4, dtype=np.uint8) * 7).reshape(height, 2, 4)
    with Device(validation=True) as device:
        res = Resources(device)
        try:
            texture = res.texture(pixels, cube=cube)
            (staging,) = res.buffers
            assert staging.size == pixels.size * layers
            assert device.read(staging) == pixels.tobytes() * layers
            assert res.textures == [texture] and texture.view is not None
        finally:
            res.close()
    assert device.messages == []  # the upload's layout transitions and copy are valid


def test_one_sampler_per_render_and_everything_freed_on_close() -> None:
    with Device(validation=True) as device:
        res = Resources(device)
        try:
            assert res.sampler() is res.sampler() and len(res.samplers) == 1
            res.texture(np.zeros((1, 1, 4), np.uint8), cube=True)
            res.descriptor_pool(3)
            assert len(res.pools) == 1 and len(res.textures) == 1
        finally:
            res.close()
        assert (res.pools, res.samplers, res.textures, res.buffers) == ([], [], [], [])
    assert device.messages == []
