"""Facts of real third-party files, checked against their own glTF JSON."""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pipeline.scan import scanner
from pipeline.scan.scanner import ScanResult
from pipeline.world import open_world

MODELS = "glTF-Sample-Assets/Models"
FAKE = "glTF-Asset-Generator/Output/Positive/Compatibility/Compatibility_05.gltf"


def scan(path, **options):
    """Scan the world of ``path`` (a world, chunk folder or file)."""
    return scanner.scan(open_world(path), **options)


def load_json(path: Path) -> dict:
    data = path.read_bytes()
    if data[:4] == b"glTF":
        length = struct.unpack_from("<I", data, 12)[0]
        data = data[20:20 + length]
    return json.loads(data)


@pytest.fixture(scope="module")
def corpus_scan(corpus: Path) -> ScanResult:
    return scan(corpus)


def draws_of(result: ScanResult, file: str):
    found = [d for d in result.draws if d.source.file == file]
    assert found, f"no draws for {file}"
    return found


def model(corpus_scan: ScanResult, corpus: Path, name: str, variant: str = "glTF"):
    folder = f"{MODELS}/{name}/{variant}"
    file = next(f for f in corpus_scan.files if f.startswith(folder + "/"))
    return load_json(corpus / file), draws_of(corpus_scan, file)


# ---------------------------------------------------------------- whole corpus
def test_every_file_scans_and_the_only_error_is_the_fake_extension(corpus: Path, corpus_scan: ScanResult) -> None:
    on_disk = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.suffix in (".gltf", ".glb"))
    assert corpus_scan.files == on_disk
    assert [str(e) for e in corpus_scan.errors] == [
        f"{FAKE}: /extensionsRequired/0: error: required extension 'FAKE_materials_quantumRendering' is not supported"
    ]
    assert f"{MODELS}/BoxVertexColors/glTF-Binary" in corpus_scan.chunks


def test_draws_are_sorted_and_sources_match_facts(corpus_scan: ScanResult) -> None:
    order = [(d.source.chunk, d.source.file, d.source.node, d.source.mesh, d.source.primitive,
              d.source.variant is not None, d.source.variant or "") for d in corpus_scan.draws]
    assert order == sorted(order)
    for draw in corpus_scan.draws:
        assert draw.facts.chunk.name == draw.source.chunk == draw.source.file.rsplit("/", 1)[0]
        assert draw.source.level == draw.source.file.split("/")[0]


@pytest.mark.slow
def test_mesh_and_material_facts_match_the_json_everywhere(corpus: Path, corpus_scan: ScanResult) -> None:
    docs: dict[str, dict] = {}
    for draw in corpus_scan.draws:
        src = draw.source
        doc = docs.setdefault(src.file, load_json(corpus / src.file))
        assert doc["nodes"][src.node]["mesh"] == src.mesh
        prim = doc["meshes"][src.mesh]["primitives"][src.primitive]
        check_mesh(draw.facts.mesh, doc, prim)
        check_material(draw.facts.material, doc, src.material)
        if src.variant is None:
            assert src.material == prim.get("material")


def check_mesh(mesh, doc: dict, prim: dict) -> None:
    accessors = doc["accessors"]
    assert set(mesh.attributes) == set(prim["attributes"])
    for name, index in prim["attributes"].items():
        assert mesh.attributes[name].type == accessors[index]["type"]
        assert mesh.attributes[name].componentType == accessors[index]["componentType"]
        assert mesh.attributes[name].normalized == accessors[index].get("normalized", False)
    assert mesh.mode == prim.get("mode", 4)
    assert mesh.indexed == ("indices" in prim)
    assert mesh.vertexCount == accessors[prim["attributes"]["POSITION"]]["count"]
    assert mesh.texcoordSets == sum(n.startswith("TEXCOORD_") for n in prim["attributes"])
    targets = prim.get("targets", [])
    assert mesh.morphTargets == len(targets)
    assert mesh.morphAttributes == tuple(sorted({n for t in targets for n in t}))


def check_material(material, doc: dict, index: int | None) -> None:
    if index is None:
        assert material.default
        return
    authored = doc["materials"][index]
    assert not material.default
    assert material.alphaMode == authored.get("alphaMode", "OPAQUE")
    assert material.doubleSided == authored.get("doubleSided", False)
    assert material.extensions == tuple(sorted(authored.get("extensions", {})))
    pbr = authored.get("pbrMetallicRoughness", {})
    assert material.pbrMetallicRoughness.baseColorFactor == tuple(pbr.get("baseColorFactor", (1, 1, 1, 1)))
    assert (material.normalTexture is None) == ("normalTexture" not in authored)


# ---------------------------------------------------------------- named models
@pytest.mark.parametrize("name,variant", [("BoxVertexColors", "glTF-Binary"), ("VertexColorTest", "glTF")])
def test_vertex_colors(corpus: Path, corpus_scan: ScanResult, name: str, variant: str) -> None:
    doc, draws = model(corpus_scan, corpus, name, variant)
    seen = set()
    for draw in draws:
        attrs = doc["meshes"][draw.source.mesh]["primitives"][draw.source.primitive]["attributes"]
        expected = doc["accessors"][attrs["COLOR_0"]]["type"] if "COLOR_0" in attrs else None
        assert draw.facts.mesh.colorType == expected
        seen.add(expected)
    assert seen & {"VEC3", "VEC4"}


@pytest.mark.parametrize("name", ["RiggedSimple", "Fox"])
def test_skins(corpus: Path, corpus_scan: ScanResult, name: str) -> None:
    doc, draws = model(corpus_scan, corpus, name)
    skinned = [d for d in draws if d.facts.node.skin]
    assert skinned
    for draw in draws:
        node = doc["nodes"][draw.source.node]
        assert draw.facts.node.skin == ("skin" in node)
        if "skin" in node:
            assert draw.facts.node.skinJoints == len(doc["skins"][node["skin"]]["joints"])
            attrs = doc["meshes"][draw.source.mesh]["primitives"][draw.source.primitive]["attributes"]
            assert draw.facts.mesh.jointSets == sum(n.startswith("JOINTS_") for n in attrs) >= 1
            assert draw.facts.mesh.weightSets == sum(n.startswith("WEIGHTS_") for n in attrs) >= 1


@pytest.mark.parametrize("name", ["AnimatedMorphCube", "MorphPrimitivesTest"])
def test_morph_targets(corpus: Path, corpus_scan: ScanResult, name: str) -> None:
    doc, draws = model(corpus_scan, corpus, name)
    morphed = 0
    for draw in draws:
        mesh = doc["meshes"][draw.source.mesh]
        targets = mesh["primitives"][draw.source.primitive].get("targets", [])
        assert draw.facts.mesh.morphTargets == len(targets)
        assert set(draw.facts.mesh.morphAttributes) == {n for t in targets for n in t}
        assert draw.facts.node.morphWeights == ("weights" in mesh or "weights" in doc["nodes"][draw.source.node])
        morphed += bool(targets)
    assert morphed


def test_texture_transforms(corpus: Path, corpus_scan: ScanResult) -> None:
    doc, draws = model(corpus_scan, corpus, "TextureTransformTest")
    transformed = 0
    for draw in draws:
        info = doc["materials"][draw.source.material]["pbrMetallicRoughness"]["baseColorTexture"]
        transform = info.get("extensions", {}).get("KHR_texture_transform")
        ref = draw.facts.material.pbrMetallicRoughness.baseColorTexture
        assert ref.index == info["index"]
        assert ref.transform == (transform is not None) == draw.facts.material.textureTransform
        override = transform.get("texCoord") if transform else None
        assert ref.transformTexCoord == override
        assert ref.uv == (override if override is not None else info.get("texCoord", 0))
        transformed += ref.transform
    assert 0 < transformed


def test_material_variants(corpus: Path, corpus_scan: ScanResult) -> None:
    doc, draws = model(corpus_scan, corpus, "MaterialsVariantsShoe")
    names = [v["name"] for v in doc["extensions"]["KHR_materials_variants"]["variants"]]
    expected = Counter()
    for n, node in enumerate(doc["nodes"]):
        for p, prim in enumerate(doc["meshes"][node["mesh"]]["primitives"] if "mesh" in node else []):
            expected[(n, p, None, prim.get("material"))] += 1
            for mapping in prim.get("extensions", {}).get("KHR_materials_variants", {}).get("mappings", []):
                for v in mapping["variants"]:
                    expected[(n, p, names[v], mapping["material"])] += 1
    got = Counter((d.source.node, d.source.primitive, d.source.variant, d.source.material) for d in draws)
    assert got == expected
    assert {d.source.variant for d in draws} == {None, *names}


def test_lights(corpus: Path, corpus_scan: ScanResult) -> None:
    doc, draws = model(corpus_scan, corpus, "LightsPunctualLamp")
    lights = doc["extensions"]["KHR_lights_punctual"]["lights"]
    scene = doc["scenes"][doc.get("scene", 0)]
    counts, stack = Counter(), list(scene["nodes"])
    while stack:
        node = doc["nodes"][stack.pop()]
        if "KHR_lights_punctual" in node.get("extensions", {}):
            counts[lights[node["extensions"]["KHR_lights_punctual"]["light"]]["type"]] += 1
        stack.extend(node.get("children", []))
    assert sum(counts.values()) > 0
    for draw in draws:
        got = draw.facts.scene.lights
        assert (got.directional, got.point, got.spot) == (counts["directional"], counts["point"], counts["spot"])


def test_instancing(corpus: Path, corpus_scan: ScanResult) -> None:
    doc, draws = model(corpus_scan, corpus, "SimpleInstancing")
    instanced = 0
    for draw in draws:
        ext = doc["nodes"][draw.source.node].get("extensions", {}).get("EXT_mesh_gpu_instancing")
        assert draw.facts.node.instancing == (ext is not None)
        assert draw.facts.node.instancingAttributes == (tuple(sorted(ext["attributes"])) if ext else ())
        instanced += ext is not None
    assert instanced


def test_two_uv_sets(corpus: Path, corpus_scan: ScanResult) -> None:
    doc, draws = model(corpus_scan, corpus, "MultiUVTest")
    for draw in draws:
        material = doc["materials"][draw.source.material]
        slots = [material.get(k) for k in ("normalTexture", "occlusionTexture", "emissiveTexture")]
        slots += list(material.get("pbrMetallicRoughness", {}).values())
        uvs = [s.get("texCoord", 0) for s in slots if isinstance(s, dict)]
        assert draw.facts.mesh.texcoordSets == 2
        assert draw.facts.material.maxUv == max(uvs) == 1


def world_dets(doc: dict) -> dict[int, float]:
    """Determinant of each mesh node's world 3x3, computed independently with numpy."""
    def local(node):
        if "matrix" in node:
            return np.array(node["matrix"], dtype=float).reshape(4, 4).T[:3, :3]
        x, y, z, w = node.get("rotation", (0, 0, 0, 1))
        r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        return r @ np.diag(node.get("scale", (1, 1, 1)))

    out, stack = {}, [(n, np.eye(3)) for n in doc["scenes"][doc.get("scene", 0)]["nodes"]]
    while stack:
        n, parent = stack.pop()
        world = parent @ local(doc["nodes"][n])
        out[n] = np.linalg.det(world)
        stack.extend((c, world) for c in doc["nodes"][n].get("children", []))
    return out


@pytest.mark.parametrize("variant", ["glTF", "glTF-Binary"])
def test_mirrored_transforms(corpus: Path, corpus_scan: ScanResult, variant: str) -> None:
    doc, draws = model(corpus_scan, corpus, "NegativeScaleTest", variant)
    dets = world_dets(doc)
    for draw in draws:
        assert draw.facts.node.mirrored == (dets[draw.source.node] < 0)
    assert {d.facts.node.mirrored for d in draws} == {True, False}


def test_compressed_and_quantized_variants_scan(corpus_scan: ScanResult) -> None:
    for suffix in ("glTF-Draco", "glTF-Quantized", "glTF-KTX-BasisU"):
        chunks = [c for c in corpus_scan.chunks if c.endswith(suffix)]
        assert chunks and all(any(d.source.chunk == c for d in corpus_scan.draws) for c in chunks)


def test_version_2_1_files_scan(corpus: Path, corpus_scan: ScanResult) -> None:
    newer = [f for f in corpus_scan.files if f.endswith(".gltf") and load_json(corpus / f)["asset"]["version"] == "2.1"]
    assert len(newer) == 4
    assert not any(e.location.file in newer for e in corpus_scan.errors)
