"""What a render reads of one glTF file: primitives, transforms, morphs, skins, instances and images."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest

from pipeline.runtime.geometry import decode_image, load_scene

TRIANGLE = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype="<f4")


class Builder:
    """A glTF document whose accessors live in one base64 ``data:`` buffer."""

    def __init__(self) -> None:
        self.blob = b""
        self.doc: dict = {"asset": {"version": "2.0"}, "buffers": [], "bufferViews": [], "accessors": [],
                          "scenes": [{"nodes": [0]}], "scene": 0, "nodes": [], "meshes": []}

    def accessor(self, values: np.ndarray, kind: str, component: int = 5126) -> int:
        data = values.tobytes()
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(data)})
        self.blob += data + bytes(-len(data) % 4)
        acc = {"bufferView": len(self.doc["bufferViews"]) - 1, "componentType": component,
               "count": len(values), "type": kind}
        if kind == "VEC3" and component == 5126:
            acc["min"], acc["max"] = values.min(axis=0).tolist(), values.max(axis=0).tolist()
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def finish(self) -> dict:
        uri = "data:application/octet-stream;base64," + base64.b64encode(self.blob).decode()
        self.doc["buffers"] = [{"uri": uri, "byteLength": len(self.blob)}]
        return self.doc


def png(rgba: tuple[int, int, int, int], size=(2, 3)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGBA", size, rgba).save(buffer, format="PNG")
    return buffer.getvalue()


def test_primitives_with_their_draw_ids_materials_and_world_positions(tmp_path, write_gltf) -> None:
    b = Builder()
    pos = b.accessor(TRIANGLE, "VEC3")
    idx = b.accessor(np.array([0, 1, 2], dtype="<u2"), "SCALAR", 5123)
    b.doc["materials"] = [{"name": "red", "pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 1]}}]
    b.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos}, "indices": idx, "material": 0},
                                       {"attributes": {"POSITION": pos}, "mode": 1},  # lines: not drawn
                                       {"attributes": {"POSITION": pos}}]}]
    b.doc["nodes"] = [{"mesh": 0, "translation": [1.0, 2.0, 3.0]}, {"name": "empty"}]
    b.doc["scenes"] = [{"nodes": [0, 1]}]
    write_gltf(tmp_path / "c" / "a.gltf", b.finish())
    scene = load_scene(tmp_path, "c/a.gltf")
    assert scene.file == "c/a.gltf"
    assert [p.draw_id for p in scene.primitives] == [("c/a.gltf", 0, 0, 0, 0, None), ("c/a.gltf", 0, 0, 2, None, None)]
    first, second = scene.primitives
    assert first.material == b.doc["materials"][0] and second.material == {}
    assert first.indices.dtype == np.uint32 and first.indices.tolist() == [0, 1, 2]
    assert second.indices is None and second.vertex_count == 3
    assert np.allclose(first.world_positions(), TRIANGLE + [1.0, 2.0, 3.0])
    assert scene.skipped == ["c/a.gltf: /meshes/0/primitives/1: not a triangle list"]


def test_morph_targets_move_positions_by_their_weights(tmp_path, write_gltf) -> None:
    b = Builder()
    pos = b.accessor(TRIANGLE, "VEC3")
    delta = np.array([[0.0, 0.0, 2.0]] * 3, dtype="<f4")
    target = b.accessor(delta, "VEC3")
    b.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos}, "targets": [{"POSITION": target}] * 2}],
                        "weights": [0.25]}]  # the second target has no weight: 0
    b.doc["nodes"] = [{"mesh": 0}]
    write_gltf(tmp_path / "m.gltf", b.finish())
    (prim,) = load_scene(tmp_path, "m.gltf").primitives
    assert prim.weights == [0.25, 0.0]
    assert np.allclose(prim.world_positions(), TRIANGLE + [0.0, 0.0, 0.5])


def test_a_skinned_primitive_follows_its_joint(tmp_path, write_gltf) -> None:
    b = Builder()
    pos = b.accessor(TRIANGLE, "VEC3")
    joints = b.accessor(np.zeros((3, 4), dtype="<u1"), "VEC4", 5121)
    weights = b.accessor(np.tile(np.array([1.0, 0, 0, 0], dtype="<f4"), (3, 1)), "VEC4")
    b.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}]
    b.doc["nodes"] = [{"mesh": 0, "skin": 0}, {"translation": [0.0, 5.0, 0.0]}]
    b.doc["skins"] = [{"joints": [1]}]  # no inverse bind matrices: identity
    b.doc["scenes"] = [{"nodes": [0, 1]}]
    write_gltf(tmp_path / "s.gltf", b.finish())
    (prim,) = load_scene(tmp_path, "s.gltf").primitives
    assert prim.joints.shape == (1, 4, 4)
    assert np.allclose(prim.world_positions(), TRIANGLE + [0.0, 5.0, 0.0])


def test_gpu_instancing_draws_the_primitive_once_per_instance(tmp_path, write_gltf) -> None:
    b = Builder()
    pos = b.accessor(TRIANGLE, "VEC3")
    moves = b.accessor(np.array([[10.0, 0, 0], [0, 0, -10.0]], dtype="<f4"), "VEC3")
    b.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos}}]}]
    b.doc["nodes"] = [{"mesh": 0, "extensions": {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": moves}}}}]
    b.doc["extensionsUsed"] = ["EXT_mesh_gpu_instancing"]
    write_gltf(tmp_path / "i.gltf", b.finish())
    (prim,) = load_scene(tmp_path, "i.gltf").primitives
    assert prim.instances["ROTATION"].tolist() == [[0, 0, 0, 1]] * 2  # defaults where the file has none
    assert np.allclose(prim.world_positions(), np.concatenate([TRIANGLE + [10, 0, 0], TRIANGLE + [0, 0, -10]]))


def test_images_from_data_uris_and_files_inside_the_root_only(tmp_path, write_gltf) -> None:
    b = Builder()
    pos = b.accessor(TRIANGLE, "VEC3")
    b.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos}}]}]
    b.doc["nodes"] = [{"mesh": 0}]
    red, green = png((255, 0, 0, 255)), png((0, 255, 0, 128))
    (tmp_path / "w" / "tex").mkdir(parents=True)
    (tmp_path / "w" / "tex" / "green.png").write_bytes(green)
    (tmp_path / "outside.png").write_bytes(red)
    b.doc["images"] = [{"uri": "data:image/png;base64," + base64.b64encode(red).decode()},
                       {"uri": "tex/green.png"}, {"uri": "missing.png"}]
    b.doc["textures"] = [{"source": 0}, {"source": 1}]
    write_gltf(tmp_path / "w" / "t.gltf", b.finish())
    scene = load_scene(tmp_path / "w", "t.gltf")
    assert scene.images == {0: red, 1: green}
    assert scene.textures == [{"source": 0}, {"source": 1}]


def test_decode_image_gives_rgba_pixels_or_none() -> None:
    pixels = decode_image(png((10, 20, 30, 40), size=(2, 3)))
    assert pixels.shape == (3, 2, 4) and pixels.dtype == np.uint8
    assert (pixels == [10, 20, 30, 40]).all()
    assert decode_image(b"not an image") is None
    assert decode_image(b"") is None


def test_a_primitive_without_readable_positions_is_skipped(tmp_path, write_gltf) -> None:
    b = Builder()
    pos = b.accessor(TRIANGLE, "VEC3")
    b.doc["accessors"].append({"componentType": 5126, "count": 3, "type": "VEC3",
                               "min": [0, 0, 0], "max": [1, 1, 0]})  # no bufferView
    b.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": 1}}, {"attributes": {"POSITION": pos}}]}]
    b.doc["nodes"] = [{"mesh": 0}]
    write_gltf(tmp_path / "x.gltf", b.finish())
    scene = load_scene(tmp_path, "x.gltf")
    assert [p.draw_id[3] for p in scene.primitives] == [1]
    assert len(scene.skipped) == 1 and scene.skipped[0].startswith("x.gltf: /meshes/0/primitives/0: positions")


def test_a_file_that_is_not_gltf_is_a_located_error(tmp_path) -> None:
    from pipeline.errors import PipelineError

    (tmp_path / "bad.gltf").write_text("{ not json")
    with pytest.raises(PipelineError) as info:
        load_scene(tmp_path, "bad.gltf")
    assert info.value.diagnostics[0].location.file == "bad.gltf"
