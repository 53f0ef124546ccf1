"""Offscreen render of one cooked glTF file on lavapipe, its camera, and the PNG it writes."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest

from runtime_helpers import SAMPLE, cook, needs_vulkan
from pipeline.runtime.geometry import load_scene
from pipeline.runtime.misses import read_log
from pipeline.runtime.render import FORWARD, VIEW_DIRECTION, camera, render, write_png

SIZE = (96, 64)


def project(view_projection: np.ndarray, points: np.ndarray) -> np.ndarray:
    clip = np.c_[points, np.ones(len(points))] @ view_projection.T
    return clip[:, :3] / clip[:, 3:]


def test_camera_frames_every_point_and_looks_at_the_centre() -> None:
    points = np.array([[-3.0, 0.0, 1.0], [5.0, 2.0, -4.0], [0.5, 7.0, 2.0], [1.0, -1.0, 0.0]])
    view, projection, eye = camera(points, SIZE)
    assert np.allclose(view[:3, :3] @ view[:3, :3].T, np.eye(3))  # a rotation
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    assert np.allclose((eye - centre) / np.linalg.norm(eye - centre), VIEW_DIRECTION)
    ndc = project(projection @ view, np.vstack([points, centre]))
    assert np.allclose(ndc[-1, :2], 0.0, atol=1e-9)
    assert (np.abs(ndc[:, :2]) <= 1).all() and (ndc[:, 2] > 0).all() and (ndc[:, 2] < 1).all()


def test_camera_of_a_single_point_is_finite() -> None:
    view, projection, eye = camera(np.array([[1.0, 2.0, 3.0]]), (32, 32))
    assert np.isfinite(view).all() and np.isfinite(projection).all() and np.isfinite(eye).all()


def test_write_png_writes_the_pixels(tmp_path: Path) -> None:
    from PIL import Image

    image = (np.arange(4 * 3 * 4, dtype=np.uint8) * 5).reshape(4, 3, 4)
    path = tmp_path / "sub" / "a.png"
    path.parent.mkdir()
    write_png(path, image)
    first = path.read_bytes()
    with Image.open(io.BytesIO(first)) as img:
        assert img.mode == "RGBA" and (np.asarray(img) == image).all()
    write_png(path, image)
    assert path.read_bytes() == first


@pytest.fixture(scope="module")
def cooked(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("render")
    shutil.copytree(SAMPLE / "forest" / "c02", tmp / "world" / "c02")
    out = cook(tmp / "world", tmp)
    shutil.copy(tmp / "world" / "c02" / "cabin.gltf", tmp / "world" / "c02" / "later.gltf")  # not in the cook
    return tmp / "world", out


@needs_vulkan
def test_render_draws_every_primitive_inside_its_projected_bounds(cooked) -> None:
    world, out = cooked
    scene = load_scene(world, "c02/cabin.gltf")
    result = render(world, "c02/cabin.gltf", out, SIZE)
    assert (result.file, result.chunk, result.image.shape) == ("c02/cabin.gltf", "c02", (SIZE[1], SIZE[0], 4))
    assert result.drawn == len(scene.primitives) > 0 and result.fallbacks == 0
    assert result.not_drawn == [] and result.validation_messages == []
    ndc = project(result.view_projection, np.concatenate([p.world_positions() for p in scene.primitives]))
    w, h = SIZE
    x, y = (ndc[:, 0] + 1) / 2 * w, (1 - ndc[:, 1]) / 2 * h  # the viewport flips y: +1 is the top row
    rows, cols = np.nonzero(result.mask)
    assert len(rows) > 0
    assert cols.min() >= np.floor(x.min()) - 1 and cols.max() <= np.ceil(x.max()) + 1
    assert rows.min() >= np.floor(y.min()) - 1 and rows.max() <= np.ceil(y.max()) + 1
    assert result.to_json()["covered_pixels"] == len(rows)


@needs_vulkan
def test_a_file_the_cook_never_saw_draws_nothing_and_logs_each_miss(cooked, tmp_path: Path) -> None:
    world, out = cooked
    log = tmp_path / "misses.jsonl"
    scene = load_scene(world, "c02/later.gltf")
    result = render(world, "c02/later.gltf", out, SIZE, miss_log=log)
    assert result.drawn == 0 and not result.mask.any()
    assert len(result.not_drawn) == len(scene.primitives) and all(FORWARD in n for n in result.not_drawn)
    records = [r for _, r in read_log(log)]
    assert len(records) == len(scene.primitives)
    assert {(r["key"], r["pass"], r["draw"]["file"]) for r in records} == {(None, FORWARD, "c02/later.gltf")}
