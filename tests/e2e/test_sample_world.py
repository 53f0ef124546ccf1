"""The bundled sample world: deterministic generator, valid glTF 2.0, the promised variety."""

from __future__ import annotations

import base64
import importlib.util
import json
import struct
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pygltflib
import pytest
from paths import REPO

ROOT = REPO
WORLD = ROOT / "examples" / "sample_world"
GENERATOR = ROOT / "examples" / "make_sample_world.py"
COMPONENTS = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def _generator():
    spec = importlib.util.spec_from_file_location("make_sample_world", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _load(path: Path) -> tuple[dict, bytes]:
    """(JSON document, binary buffer 0) of a .gltf with a data: URI or a .glb."""
    data = path.read_bytes()
    if path.suffix == ".glb":
        magic, version, length = struct.unpack_from("<4sII", data)
        assert (magic, version, length) == (b"glTF", 2, len(data))
        json_len, kind = struct.unpack_from("<I4s", data, 12)
        assert kind == b"JSON" and json_len % 4 == 0
        bin_len, bin_kind = struct.unpack_from("<I4s", data, 20 + json_len)
        assert bin_kind == b"BIN\x00" and 28 + json_len + bin_len == len(data)
        return json.loads(data[20:20 + json_len]), data[28 + json_len:]
    doc = json.loads(data)
    uri = doc["buffers"][0]["uri"]
    assert uri.startswith("data:application/octet-stream;base64,")
    return doc, base64.b64decode(uri.split(",", 1)[1])


def _accessor(doc: dict, binary: bytes, index: int) -> np.ndarray:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    width = WIDTH[acc["type"]]
    dtype = np.dtype(COMPONENTS[acc["componentType"]])
    start = view["byteOffset"] + acc.get("byteOffset", 0)
    assert start % dtype.itemsize == 0
    assert acc.get("byteOffset", 0) + acc["count"] * width * dtype.itemsize <= view["byteLength"]
    return np.frombuffer(binary, dtype, acc["count"] * width, start).reshape(acc["count"], width)


def _walk_extensions(value, found: set) -> set:
    if isinstance(value, dict):
        found.update(value.get("extensions", {}))
        for item in value.values():
            _walk_extensions(item, found)
    elif isinstance(value, list):
        for item in value:
            _walk_extensions(item, found)
    return found


@pytest.fixture(scope="module")
def world() -> dict[str, tuple[dict, bytes]]:
    paths = sorted(p for p in WORLD.rglob("*") if p.suffix in (".gltf", ".glb"))
    return {p.relative_to(WORLD).as_posix(): _load(p) for p in paths}


def _primitives(world):
    """(file, doc, binary, primitive, material) for every primitive."""
    for name, (doc, binary) in world.items():
        for mesh in doc["meshes"]:
            for prim in mesh["primitives"]:
                yield name, doc, binary, prim, doc["materials"][prim["material"]]


# ------------------------------------------------------------------ generator
def test_generator_is_deterministic_and_matches_committed_files(tmp_path):
    generator = _generator()
    generator.generate(tmp_path / "a")
    generator.generate(tmp_path / "b")
    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert first == second
    assert first == _files(WORLD), "examples/sample_world is stale: run python examples/make_sample_world.py"


def test_world_is_small():
    assert sum(len(b) for b in _files(WORLD).values()) < 300_000


def test_levels_and_chunks(world):
    chunks = {name.rsplit("/", 1)[0] for name in world}
    levels = {chunk.split("/")[0] for chunk in chunks}
    assert len(levels) >= 2 and len(chunks) >= 6
    assert {Path(n).suffix for n in world} == {".gltf", ".glb"}


# ------------------------------------------------------------------ validity
def test_every_file_loads_with_pygltflib():
    for path in sorted(WORLD.rglob("*.gl*")):
        gltf = pygltflib.GLTF2().load(str(path))
        assert gltf.asset.version == "2.0" and gltf.meshes and gltf.scenes, path


def test_structure(world):
    for name, (doc, binary) in world.items():
        assert doc["asset"]["version"] == "2.0"
        assert doc["buffers"][0]["byteLength"] <= len(binary), name
        for view in doc["bufferViews"]:
            assert view["byteOffset"] + view["byteLength"] <= doc["buffers"][0]["byteLength"], name
        for i in range(len(doc["accessors"])):
            _accessor(doc, binary, i)
        assert set(doc.get("extensionsUsed", [])) == _walk_extensions(doc, set()), name
        assert "extensionsRequired" not in doc
        _check_nodes(name, doc)


def _check_nodes(name: str, doc: dict) -> None:
    parents = defaultdict(int)
    for node in doc["nodes"]:
        for child in node.get("children", []):
            parents[child] += 1
    assert all(count == 1 for count in parents.values()), name
    roots = doc["scenes"][doc["scene"]]["nodes"]
    assert not set(roots) & set(parents), name
    assert set(roots) | set(parents) == set(range(len(doc["nodes"]))), name


def test_primitives_are_consistent(world):
    for name, doc, binary, prim, _ in _primitives(world):
        attrs = prim["attributes"]
        count = doc["accessors"][attrs["POSITION"]]["count"]
        assert all(doc["accessors"][a]["count"] == count for a in attrs.values()), name
        assert _accessor(doc, binary, prim["indices"]).max() < count, name
        for target in [attrs] + prim.get("targets", []):
            position = doc["accessors"][target["POSITION"]]
            data = _accessor(doc, binary, target["POSITION"])
            assert position["min"] == data.min(axis=0).tolist(), name
            assert position["max"] == data.max(axis=0).tolist(), name
        if "TANGENT" in attrs:
            assert set(np.abs(_accessor(doc, binary, attrs["TANGENT"])[:, 3])) == {1.0}


# ------------------------------------------------------------------ the promised variety
def _has(world, predicate) -> bool:
    return any(predicate(*args) for args in _primitives(world))


def _ext(material: dict, name: str) -> bool:
    return name in material.get("extensions", {})


def _color(doc, binary, prim) -> np.ndarray | None:
    index = prim["attributes"].get("COLOR_0")
    if index is None:
        return None
    acc, data = doc["accessors"][index], _accessor(doc, binary, index).astype(float)
    return data / 255 if acc.get("normalized") else data


FEATURES = {
    "normal map + tangents": lambda n, d, b, p, m: "normalTexture" in m and "TANGENT" in p["attributes"]
    and "baseColorTexture" in m["pbrMetallicRoughness"],
    "normal map, no tangents": lambda n, d, b, p, m: "normalTexture" in m and "TANGENT" not in p["attributes"],
    "MASK foliage": lambda n, d, b, p, m: m.get("alphaMode") == "MASK" and m.get("doubleSided"),
    "glass": lambda n, d, b, p, m: m.get("alphaMode") == "BLEND" and all(
        _ext(m, f"KHR_materials_{e}") for e in ("transmission", "volume", "ior")),
    "COLOR_0 VEC3": lambda n, d, b, p, m: "COLOR_0" in p["attributes"]
    and d["accessors"][p["attributes"]["COLOR_0"]]["type"] == "VEC3",
    "COLOR_0 VEC4": lambda n, d, b, p, m: "COLOR_0" in p["attributes"]
    and d["accessors"][p["attributes"]["COLOR_0"]]["type"] == "VEC4",
    "all-white COLOR_0": lambda n, d, b, p, m: _color(d, b, p) is not None and bool((_color(d, b, p) == 1).all()),
    "skinned": lambda n, d, b, p, m: {"JOINTS_0", "WEIGHTS_0"} <= set(p["attributes"])
    and any("skin" in node for node in d["nodes"]) and bool(d.get("skins")),
    "morph targets": lambda n, d, b, p, m: len(p.get("targets", [])) >= 1,
    "unlit": lambda n, d, b, p, m: _ext(m, "KHR_materials_unlit"),
    "clearcoat": lambda n, d, b, p, m: _ext(m, "KHR_materials_clearcoat"),
    "sheen": lambda n, d, b, p, m: _ext(m, "KHR_materials_sheen"),
    "emissive strength": lambda n, d, b, p, m: _ext(m, "KHR_materials_emissive_strength") and "emissiveTexture" in m,
    "texture transform": lambda n, d, b, p, m: "KHR_texture_transform" in json.dumps(m),
    "occlusion on TEXCOORD_1": lambda n, d, b, p, m: m.get("occlusionTexture", {}).get("texCoord") == 1
    and "TEXCOORD_1" in p["attributes"],
    "material variants": lambda n, d, b, p, m: "KHR_materials_variants" in p.get("extensions", {})
    and len(d["extensions"]["KHR_materials_variants"]["variants"]) >= 2,
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_material_and_mesh_variety(world, feature):
    assert _has(world, FEATURES[feature]), feature


def test_node_and_scene_variety(world):
    nodes = [node for doc, _ in world.values() for node in doc["nodes"]]
    assert any("EXT_mesh_gpu_instancing" in n.get("extensions", {}) for n in nodes)
    assert any(np.prod(n.get("scale", [1, 1, 1])) < 0 for n in nodes)
    lights = [l for doc, _ in world.values()
              for l in doc.get("extensions", {}).get("KHR_lights_punctual", {}).get("lights", [])]
    assert {l["type"] for l in lights} == {"directional", "point", "spot"}


def _traits(doc: dict) -> set[str]:
    traits = {f"material:{m['name']}" for m in doc["materials"]} | _walk_extensions(doc, set())
    for mesh in doc["meshes"]:
        for prim in mesh["primitives"]:
            traits |= set(prim["attributes"])
            traits |= {"morph"} if "targets" in prim else set()
            if "COLOR_0" in prim["attributes"]:
                traits.add("COLOR_0:" + doc["accessors"][prim["attributes"]["COLOR_0"]]["type"])
    traits |= {"skin"} if doc.get("skins") else set()
    traits |= {"mirrored"} if any(np.prod(n.get("scale", [1])) < 0 for n in doc["nodes"]) else set()
    return traits


def test_chunks_share_materials_and_each_has_something_unique(world):
    by_chunk = defaultdict(set)
    for name, (doc, _) in world.items():
        by_chunk[name.rsplit("/", 1)[0]] |= _traits(doc)
    uses = defaultdict(int)
    for traits in by_chunk.values():
        for trait in traits:
            uses[trait] += 1
    assert sum(1 for t, n in uses.items() if t.startswith("material:") and n >= 3) >= 3
    for chunk, traits in by_chunk.items():
        assert any(uses[t] == 1 for t in traits), f"{chunk} has nothing of its own"
