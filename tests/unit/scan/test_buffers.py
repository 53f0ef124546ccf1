"""Optional mesh facts read from buffer data (white vertex colors, joint influences), and where the bytes come from."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import Limits
from pipeline.scan import buffers
from pipeline.scan.buffers import (
    OPTIONAL_FACTS, WHITE_TOLERANCE, BufferData, color_all_white, max_joint_influences, primitive_facts,
)
from pipeline.scan.gltf.reader import parse_gltf

TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4"}
COMPONENT = {np.dtype("int8"): 5120, np.dtype("uint8"): 5121, np.dtype("uint16"): 5123, np.dtype("float32"): 5126}
POSITIONS = np.zeros((3, 3), np.float32)


def document(attributes: dict[str, np.ndarray], *, normalized: bool = False) -> tuple[dict, bytes]:
    """A one-primitive glTF whose attributes each have their own view in buffer 0, and that buffer's bytes."""
    blob, accessors, views = b"", [], []
    for array in [POSITIONS, *attributes.values()]:
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": array.nbytes})
        accessor = {"bufferView": len(views) - 1, "componentType": COMPONENT[array.dtype], "count": len(array),
                    "type": TYPES[array.shape[1]]}
        if normalized and array.dtype.kind in "iu":
            accessor["normalized"] = True
        accessors.append(accessor)
        blob += array.tobytes() + bytes(-array.nbytes % 4)
    names = {"POSITION": 0} | {name: i + 1 for i, name in enumerate(attributes)}
    doc = {"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
           "meshes": [{"primitives": [{"attributes": names}]}], "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob)}]}
    return doc, blob


def load(folder: Path, doc: dict, blob: bytes | None = None, *, how: str = "data", uri: str = "mesh.bin",
         limits: Limits | None = None) -> BufferData:
    """Write ``doc`` (its buffer as a data: URI, an external file or a GLB BIN chunk) and read it back."""
    doc = json.loads(json.dumps(doc))
    if how == "data":
        doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
    elif how == "file":
        doc["buffers"][0]["uri"] = uri
    if how == "glb":
        text = json.dumps(doc).encode()
        text += b" " * (-len(text) % 4)
        body = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(blob), 0x004E4942) + blob
        data, path = b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body, folder / "m.glb"
    else:
        data, path = json.dumps(doc).encode(), folder / "m.gltf"
    path.write_bytes(data)
    return BufferData(parse_gltf(data, path, path.name, Limits()), folder, limits or Limits())


def facts(data: BufferData) -> dict:
    return primitive_facts(data, 0, 0, OPTIONAL_FACTS)


def colors(*rows) -> np.ndarray:
    return np.array(rows, np.float32)


@pytest.mark.parametrize("rows, white", [
    ([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]], True),
    ([[1, 1, 1, 1], [1, 1 - WHITE_TOLERANCE / 2, 1, 1], [1, 1, 1, 1]], True),
    ([[1, 1, 1, 1], [1, 1 - 2 * WHITE_TOLERANCE, 1, 1], [1, 1, 1, 1]], False),
    ([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0.5]], False),  # alpha counts too
])
def test_white_within_the_tolerance(tmp_path: Path, rows, white: bool) -> None:
    data = load(tmp_path, *document({"COLOR_0": colors(*rows)}))
    assert facts(data) == {"colorAllWhite": white, "maxJointInfluences": 0}


def test_normalized_bytes_are_scaled_so_255_is_white_and_254_is_not(tmp_path: Path) -> None:
    full = np.full((3, 3), 255, np.uint8)
    assert color_all_white(load(tmp_path, *document({"COLOR_0": full}, normalized=True)), {"COLOR_0": 1}) is True
    almost = full.copy()
    almost[2, 0] = 254  # 254/255 is 1/255 off white, more than the tolerance of 1/512
    assert color_all_white(load(tmp_path, *document({"COLOR_0": almost}, normalized=True)), {"COLOR_0": 1}) is False
    raw = load(tmp_path, *document({"COLOR_0": full}))  # not normalized: 255 is 255.0
    assert color_all_white(raw, {"COLOR_0": 1}) is False
    assert color_all_white(raw, {"POSITION": 0}) is False  # no COLOR_0 at all


def test_joint_influences_count_nonzero_weights_over_every_set(tmp_path: Path) -> None:
    weights0 = colors([1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.25, 0.25, 0.25, 0.25])
    weights1 = colors([0, 0, 0, 0], [0.2, 0, 0, 0], [0, 0, 0, 0])
    data = load(tmp_path, *document({"WEIGHTS_0": weights0, "WEIGHTS_1": weights1}))
    assert max_joint_influences(data, {"WEIGHTS_0": 1}) == 4
    assert max_joint_influences(data, {"WEIGHTS_1": 2}) == 1
    assert max_joint_influences(data, {"WEIGHTS_0": 1, "WEIGHTS_1": 2}) == 4
    lighter = colors([1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0])
    data = load(tmp_path, *document({"WEIGHTS_0": lighter, "WEIGHTS_1": weights1}))
    assert facts(data)["maxJointInfluences"] == 3  # vertex 1: two weights in set 0, one in set 1
    assert max_joint_influences(data, {"WEIGHTS_x": 1, "POSITION": 0}) == 0  # not a WEIGHTS_n set


def test_interleaved_views_are_read_with_their_stride(tmp_path: Path) -> None:
    vertices = np.zeros(3, [("position", np.float32, 3), ("color", np.float32, 4)])
    vertices["color"] = 1.0
    vertices["color"][1, 2] = 0.0  # one blue component of the middle vertex
    blob = vertices.tobytes()
    doc, _ = document({})
    doc["bufferViews"] = [{"buffer": 0, "byteLength": len(blob), "byteStride": vertices.itemsize}]
    doc["buffers"] = [{"byteLength": len(blob)}]
    doc["accessors"].append({"bufferView": 0, "byteOffset": 12, "componentType": 5126, "count": 3, "type": "VEC4"})
    doc["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = 1
    data = load(tmp_path, doc, blob)
    np.testing.assert_array_equal(data.accessor(1), vertices["color"].astype(np.float64))
    assert facts(data)["colorAllWhite"] is False


@pytest.mark.parametrize("how", ["data", "file", "glb"])
def test_every_source_of_bytes_gives_the_same_facts(tmp_path: Path, how: str) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3), "WEIGHTS_0": colors(*[[0.5, 0.5, 0, 0]] * 3)})
    (tmp_path / "my mesh.bin").write_bytes(blob)
    data = load(tmp_path, doc, blob, how=how, uri="my%20mesh.bin")  # percent-decoded to the file name
    assert facts(data) == {"colorAllWhite": True, "maxJointInfluences": 2}
    assert data.buffer(0) is data.buffer(0) and bytes(data.buffer(0)) == blob  # loaded once
    assert data.dependencies == ([tmp_path / "my mesh.bin"] if how == "file" else [])
    assert data.warnings == []


def test_unreadable_data_leaves_the_facts_unknown_without_a_warning(tmp_path: Path) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3), "WEIGHTS_0": colors(*[[1, 0, 0, 0]] * 3)})
    missing = load(tmp_path, doc, how="file", uri="absent.bin")
    assert facts(missing) == {"colorAllWhite": None, "maxJointInfluences": None}
    assert missing.warnings == [] and missing.dependencies == []
    (tmp_path / "short.bin").write_bytes(blob[:-4])  # fewer bytes than the buffer's byteLength
    short = load(tmp_path, doc, how="file", uri="short.bin")
    assert short.buffer(0) is None and facts(short)["colorAllWhite"] is None and short.warnings == []
    overrun = json.loads(json.dumps(doc))
    overrun["accessors"][1]["count"] = 4  # one vertex more than its view holds
    assert facts(load(tmp_path, overrun, blob))["colorAllWhite"] is None
    sparse = json.loads(json.dumps(doc))
    sparse["accessors"][2]["sparse"] = {"count": 1, "indices": {"bufferView": 0, "componentType": 5125},
                                        "values": {"bufferView": 0}}
    assert facts(load(tmp_path, sparse, blob)) == {"colorAllWhite": True, "maxJointInfluences": None}


def test_draco_primitives_are_not_decoded(tmp_path: Path) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3)})
    draco = json.loads(json.dumps(doc))
    draco["extensionsUsed"] = ["KHR_draco_mesh_compression"]
    draco["meshes"][0]["primitives"][0]["extensions"] = {
        "KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}}
    assert facts(load(tmp_path, draco, blob)) == {"colorAllWhite": None, "maxJointInfluences": None}
    assert facts(load(tmp_path, doc, blob))["colorAllWhite"] is True  # the same data, uncompressed


def test_meshopt_compressed_views_are_not_decoded(tmp_path: Path) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3)})
    meshopt = json.loads(json.dumps(doc))
    meshopt["extensionsUsed"] = ["EXT_meshopt_compression"]
    meshopt["bufferViews"][1]["extensions"] = {"EXT_meshopt_compression": {
        "buffer": 0, "byteLength": 36, "byteStride": 12, "count": 3, "mode": "ATTRIBUTES"}}
    assert facts(load(tmp_path, meshopt, blob))["colorAllWhite"] is None


def test_only_the_wanted_facts_are_computed(tmp_path: Path) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3)})
    (tmp_path / "mesh.bin").write_bytes(blob)
    data = load(tmp_path, doc, how="file")
    assert primitive_facts(data, 0, 0, frozenset()) == {} and data.dependencies == []  # nothing read
    assert primitive_facts(data, 0, 0, frozenset({"mesh.maxJointInfluences"})) == {"maxJointInfluences": 0}
    assert data.dependencies == []  # no WEIGHTS_n: still nothing read
    assert primitive_facts(data, 0, 0, frozenset({"mesh.colorAllWhite"})) == {"colorAllWhite": True}
    assert data.dependencies == [tmp_path / "mesh.bin"]


def test_reads_the_reader_could_not_refuse_are_located_warnings(tmp_path: Path) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3)})
    world, outside = tmp_path / "world", tmp_path / "outside"
    world.mkdir(), outside.mkdir()
    (outside / "mesh.bin").write_bytes(blob)
    (world / "link.bin").symlink_to(outside / "mesh.bin")
    (world / "big.bin").write_bytes(blob)
    cases = [
        (dict(how="file", uri="link.bin"), "buffer URI points outside the world root; not read"),
        (dict(how="file", uri="big.bin", limits=Limits(max_file_bytes=len(blob) - 1)), "buffer file not read: "),
        (dict(how="data", limits=Limits(max_data_uri_bytes=16)),
         "data URI over limits.max_data_uri_bytes; buffer not read"),
    ]
    for options, message in cases:
        data = load(world, doc, blob, **options)
        assert facts(data)["colorAllWhite"] is None
        [warning] = data.warnings
        assert str(warning).startswith(f"m.gltf: /buffers/0/uri: warning: {message}"), warning
        assert data.dependencies == []


def test_preload_imports_numpy_only_for_the_facts_that_read_buffers() -> None:
    import subprocess
    import sys

    code = ("import sys; from pipeline.scan.buffers import preload; preload(frozenset({'chunk.lights'})); "
            "a = 'numpy' in sys.modules; preload(frozenset({'mesh.colorAllWhite'})); print(a, 'numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


ODD_VALUES = {
    "float": np.array([[1, 1, 1, 1], [np.nan, -0.0, np.inf, 1 - WHITE_TOLERANCE], [0.5, 1e-40, -np.inf, 3]], np.float32),
    "u8": np.array([[255, 0, 254], [1, 255, 128], [255, 255, 255]], np.uint8),
    "i8": np.array([[-128, -127, 127, 0], [1, -1, 64, 127], [127, 127, 127, 127]], np.int8),
    "u16": np.array([[65535, 65534, 0, 1], [65535] * 4, [300, 65535, 65535, 7]], np.uint16),
    "white": np.ones((3, 4), np.float32),
}


@pytest.mark.parametrize("name", sorted(ODD_VALUES))
@pytest.mark.parametrize("normalized", [False, True])
def test_small_accessors_read_without_numpy_give_what_numpy_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  name: str, normalized: bool) -> None:
    values = ODD_VALUES[name]
    doc, blob = document({"COLOR_0": values, "WEIGHTS_0": values, "WEIGHTS_1": values[::-1].copy()},
                         normalized=normalized)
    small = load(tmp_path, doc, blob).small_accessor(1)
    assert small is not None and small is not False and all(type(v) is float for row in small for v in row)
    np.testing.assert_array_equal(np.array(small, np.float64), load(tmp_path, doc, blob).accessor(1))
    fast = facts(load(tmp_path, doc, blob))
    monkeypatch.setattr(buffers, "SMALL_ACCESSOR", 0)  # every accessor through numpy
    assert load(tmp_path, doc, blob).small_accessor(1) is None
    assert fast == facts(load(tmp_path, doc, blob))


def test_small_accessors_follow_the_stride_and_give_up_where_numpy_does(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    vertices = np.zeros(3, [("position", np.float32, 3), ("color", np.uint8, 4)])
    vertices["color"] = [[255, 255, 255, 255], [255, 0, 255, 255], [255, 255, 255, 255]]
    blob = vertices.tobytes()
    doc, _ = document({})
    doc["bufferViews"] = [{"buffer": 0, "byteLength": len(blob), "byteStride": vertices.itemsize}]
    doc["buffers"] = [{"byteLength": len(blob)}]
    doc["accessors"].append({"bufferView": 0, "byteOffset": 12, "componentType": 5121, "count": 3, "type": "VEC4",
                             "normalized": True})
    doc["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = 1
    data = load(tmp_path, doc, blob)
    np.testing.assert_array_equal(np.array(data.small_accessor(1)), data.accessor(1))
    assert facts(data)["colorAllWhite"] is False
    overrun = json.loads(json.dumps(doc))
    overrun["accessors"][1]["count"] = 4
    assert load(tmp_path, overrun, blob).small_accessor(1) is False  # what accessor() gives None for
    monkeypatch.setattr(buffers, "SMALL_ACCESSOR", 0)
    assert load(tmp_path, overrun, blob).accessor(1) is None


def test_primitives_sharing_an_accessor_read_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc, blob = document({"COLOR_0": colors(*[[1, 1, 1]] * 3), "WEIGHTS_0": colors(*[[0.5, 0.5, 0, 0]] * 3)})
    doc["meshes"].append({"primitives": [dict(doc["meshes"][0]["primitives"][0], mode=1)]})
    data = load(tmp_path, doc, blob)
    reads = []
    small = data.small_accessor
    monkeypatch.setattr(data, "small_accessor", lambda i: reads.append(i) or small(i))
    first, second = primitive_facts(data, 0, 0, OPTIONAL_FACTS), primitive_facts(data, 1, 0, OPTIONAL_FACTS)
    assert first == second == {"colorAllWhite": True, "maxJointInfluences": 2} and sorted(reads) == [1, 2]
