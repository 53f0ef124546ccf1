"""Synthetic worlds for the benchmarks: chunks x files per chunk x draws per file.

    python bench/worldgen.py OUT [--chunks 100] [--files 100] [--draws 6] [--props 40] [--levels 4] [--seed 0]

A world looks like content, not like 10,000 copies of one material: a palette of
*props* (a mesh kind, a material and a node setup each) is sampled once per seed
from the feature frequencies measured in the corpus (``corpus_frequencies.json``,
written by ``bench/corpus_stats.py``), and every draw of every file picks a prop
with a Zipf-like weight, the way a game reuses a library of assets.  Files are
hand-built glTF JSON (``.glb`` with a BIN chunk, or ``.gltf`` with a base64 data
URI) over one 96-byte buffer: enough for the scanner's accessor and buffer facts,
small enough that 10,000 files take a few seconds to write.

Same arguments and seed, same bytes.  Layout: ``OUT/l<level>/c<chunk>/f<file>.glb``
(chunks spread over ``--levels`` levels).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import orjson

FREQUENCIES = Path(__file__).resolve().parent / "corpus_frequencies.json"

# One buffer: 48 zero bytes (view 0), then 12 floats of 1.0 (view 1, "white" vertex colors).
_BIN = bytes(48) + struct.pack("<12f", *([1.0] * 12))
# Accessors shared by every mesh of a file: name -> (view, componentType, type).
_ACCESSORS = {
    "POSITION": (0, 5126, "VEC3"), "NORMAL": (0, 5126, "VEC3"), "TANGENT": (0, 5126, "VEC4"),
    "TEXCOORD": (0, 5126, "VEC2"), "COLOR3": (0, 5126, "VEC3"), "COLOR4": (0, 5126, "VEC4"),
    "WHITE3": (1, 5126, "VEC3"), "WHITE4": (1, 5126, "VEC4"), "JOINTS": (0, 5123, "VEC4"),
    "WEIGHTS": (0, 5126, "VEC4"), "INDICES": (0, 5123, "SCALAR"), "TRANSLATION": (0, 5126, "VEC3"),
}
_INDEX = {name: i for i, name in enumerate(_ACCESSORS)}
_SLOTS = ("baseColorTexture", "metallicRoughnessTexture", "normalTexture", "occlusionTexture", "emissiveTexture")
_EXTENSIONS = {  # fact name -> (extension, its JSON body)
    "clearcoat": ("KHR_materials_clearcoat", {"clearcoatFactor": 1.0}),
    "sheen": ("KHR_materials_sheen", {"sheenColorFactor": [1.0, 1.0, 1.0]}),
    "transmission": ("KHR_materials_transmission", {"transmissionFactor": 0.5}),
    "volume": ("KHR_materials_volume", {"thicknessFactor": 0.1}),
    "ior": ("KHR_materials_ior", {"ior": 1.4}),
    "specular": ("KHR_materials_specular", {"specularFactor": 0.8}),
    "iridescence": ("KHR_materials_iridescence", {"iridescenceFactor": 1.0}),
    "anisotropy": ("KHR_materials_anisotropy", {"anisotropyStrength": 0.5}),
    "emissiveStrength": ("KHR_materials_emissive_strength", {"emissiveStrength": 4.0}),
    "pbrSpecularGlossiness": ("KHR_materials_pbrSpecularGlossiness", {"glossinessFactor": 0.5}),
    "dispersion": ("KHR_materials_dispersion", {"dispersion": 0.1}),
    "diffuseTransmission": ("KHR_materials_diffuse_transmission", {"diffuseTransmissionFactor": 0.5}),
}


def load_frequencies(path: Path = FREQUENCIES) -> dict:
    return json.loads(Path(path).read_text())


# ---------------------------------------------------------------- props
@dataclass(frozen=True)
class Prop:
    """One reusable asset: a primitive's attributes, its material, and its node setup."""

    attributes: tuple[tuple[str, str], ...]   # (semantic, accessor name)
    targets: tuple[tuple[str, ...], ...]      # morph targets: semantics each moves
    mode: int
    material: str | None                      # canonical JSON of the material, None: default material
    skin: bool
    instancing: bool
    mirrored: bool
    extensions: tuple[str, ...] = field(default=())


class Sampler:
    """Draws prop features from the measured frequencies (conditional where they depend)."""

    def __init__(self, freq: dict, rng: random.Random):
        self.p, self.dist, self.rng = freq["p"], freq["dist"], rng

    def flag(self, name: str, given: float = 1.0) -> bool:
        return self.rng.random() < min(1.0, self.p.get(name, 0.0) / given) if given > 0 else False

    def pick(self, name: str) -> str:
        values = self.dist[name]
        return self.rng.choices(list(values), weights=list(values.values()))[0]

    def prop(self) -> Prop:
        attributes, extensions = self.mesh_attributes()
        targets = self.morph_targets()
        skin = ("JOINTS_0", "JOINTS") in attributes
        material, used = (None, ()) if self.flag("material.default") else self.material()
        return Prop(tuple(attributes), targets, int(self.pick("mesh.mode")), material, skin,
                    self.flag("node.instancing"), self.flag("node.mirrored"),
                    tuple(sorted(set(extensions) | set(used))))

    def mesh_attributes(self) -> tuple[list, list]:
        attributes = [("POSITION", "POSITION")]
        if self.flag("mesh.normals"):
            attributes.append(("NORMAL", "NORMAL"))
            if self.flag("mesh.tangents", self.p["mesh.normals"]):
                attributes.append(("TANGENT", "TANGENT"))
        attributes += [(f"TEXCOORD_{i}", "TEXCOORD") for i in range(int(self.pick("mesh.texcoordSets")))]
        color = self.pick("mesh.colorType")
        if color != "NONE":
            with_color = 1.0 - self.dist["mesh.colorType"]["NONE"]
            white = self.flag("mesh.colorAllWhite", with_color)
            attributes.append(("COLOR_0", ("WHITE" if white else "COLOR") + color[-1]))
        for i in range(int(self.pick("mesh.jointSets"))):
            attributes += [(f"JOINTS_{i}", "JOINTS"), (f"WEIGHTS_{i}", "WEIGHTS")]
        return attributes, []

    def morph_targets(self) -> tuple[tuple[str, ...], ...]:
        count = int(self.pick("mesh.morphTargets"))
        if not count:
            return ()
        morphed = 1.0 - self.dist["mesh.morphTargets"]["0"]
        moves = ("POSITION",) + (("NORMAL",) if self.flag("mesh.morphNormal", morphed) else ())
        moves += ("TANGENT",) if self.flag("mesh.morphTangent", morphed) else ()
        return (moves,) * count

    def material(self) -> tuple[str, tuple[str, ...]]:
        mat: dict = {"pbrMetallicRoughness": {"metallicFactor": 0.0}}
        alpha = self.pick("material.alphaMode")
        if alpha != "OPAQUE":
            mat["alphaMode"] = alpha
        if self.flag("material.doubleSided"):
            mat["doubleSided"] = True
        self.textures(mat)
        ext: dict = {}
        if self.flag("material.unlit"):
            ext["KHR_materials_unlit"] = {}
        for name, (extension, body) in _EXTENSIONS.items():
            if self.flag(f"material.{name}"):
                ext[extension] = body
        if ext:
            mat["extensions"] = ext
        used = tuple(ext) + (("KHR_texture_transform",) if b"KHR_texture_transform" in orjson.dumps(mat) else ())
        return orjson.dumps(mat, option=orjson.OPT_SORT_KEYS).decode(), used

    def textures(self, mat: dict) -> None:
        uv = int(self.pick("material.maxUv"))
        if uv < 0:
            return
        textured = 1.0 - self.dist["material.maxUv"]["-1"]
        slots = [s for s in _SLOTS if self.flag(f"material.{s}", textured)] or ["baseColorTexture"]
        for i, slot in enumerate(slots):
            info: dict = {"index": 0}
            if uv and i == len(slots) - 1:
                info["texCoord"] = uv
            if self.flag("material.textureTransform", textured) and i == 0:
                info["extensions"] = {"KHR_texture_transform": {"scale": [2.0, 2.0]}}
            (mat["pbrMetallicRoughness"] if slot in _SLOTS[:2] else mat)[slot] = info


def palette(freq: dict, size: int, seed: int) -> list[Prop]:
    """``size`` distinct props sampled from ``freq`` (deterministic for a seed)."""
    sampler = Sampler(freq, random.Random(f"palette-{seed}"))
    props: dict[Prop, None] = {}
    attempts = 0
    while len(props) < size and attempts < size * 50:
        props.setdefault(sampler.prop())
        attempts += 1
    return list(props)


# ---------------------------------------------------------------- files
def gltf_document(props: list[Prop], uri: str | None) -> bytes:
    """The glTF JSON of one file drawing ``props`` (one node + mesh per draw)."""
    materials: dict[str, int] = {}
    nodes, meshes, skins, used = [], [], [], set()
    for prop in props:
        primitive: dict = {"attributes": {sem: _INDEX[acc] for sem, acc in prop.attributes},
                           "indices": _INDEX["INDICES"], "mode": prop.mode}
        if prop.material is not None:
            primitive["material"] = materials.setdefault(prop.material, len(materials))
        mesh: dict = {"primitives": [primitive]}
        if prop.targets:
            primitive["targets"] = [{sem: _INDEX["NORMAL" if sem == "TANGENT" else sem] for sem in t}  # VEC3 deltas
                                    for t in prop.targets]
            mesh["weights"] = [0.0] * len(prop.targets)
        node: dict = {"mesh": len(meshes)}
        meshes.append(mesh)
        if prop.skin:
            node["skin"] = len(skins)
            skins.append({"joints": [len(props) + len(skins)]})
        if prop.instancing:
            node["extensions"] = {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": _INDEX["TRANSLATION"]}}}
            used.add("EXT_mesh_gpu_instancing")
        if prop.mirrored:
            node["scale"] = [-1.0, 1.0, 1.0]
        nodes.append(node)
        used.update(prop.extensions)
    nodes += [{"name": f"joint{i}"} for i in range(len(skins))]
    buffer: dict = {"byteLength": len(_BIN)}
    if uri is not None:
        buffer["uri"] = uri
    doc: dict = {
        "asset": {"version": "2.0", "generator": "bench/worldgen.py"},
        "scene": 0, "scenes": [{"nodes": list(range(len(nodes)))}], "nodes": nodes, "meshes": meshes,
        "materials": [orjson.loads(m) for m in materials],
        "accessors": [{"bufferView": view, "componentType": ctype, "count": 3, "type": kind}
                      for view, ctype, kind in _ACCESSORS.values()],
        "bufferViews": [{"buffer": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 48}],
        "buffers": [buffer],
    }
    if skins:
        doc["skins"] = skins
    if any(m for m in materials if '"index"' in m):
        doc["textures"], doc["images"] = [{"source": 0}], [{"uri": "texture.png"}]
    if used:
        doc["extensionsUsed"] = sorted(used)
    return orjson.dumps(doc)


def glb(json_bytes: bytes) -> bytes:
    json_bytes += b" " * (-len(json_bytes) % 4)
    total = 12 + 8 + len(json_bytes) + 8 + len(_BIN)
    return (struct.pack("<4sII", b"glTF", 2, total) + struct.pack("<II", len(json_bytes), 0x4E4F534A)
            + json_bytes + struct.pack("<II", len(_BIN), 0x004E4942) + _BIN)


_DATA_URI = "data:application/octet-stream;base64," + base64.b64encode(_BIN).decode()


def file_bytes(props: list[Prop], binary: bool) -> bytes:
    return glb(gltf_document(props, None)) if binary else gltf_document(props, _DATA_URI)


# ---------------------------------------------------------------- worlds
@dataclass(frozen=True)
class WorldSpec:
    chunks: int = 100
    files_per_chunk: int = 100
    draws_per_file: int = 6          # mean; each file has 1 .. 2*mean-1 draws
    seed: int = 0
    props: int = 40                  # size of the prop palette
    levels: int = 4
    glb_fraction: float = 0.7

    @property
    def files(self) -> int:
        return self.chunks * self.files_per_chunk


def chunk_name(spec: WorldSpec, c: int) -> str:
    return f"l{c % spec.levels}/c{c:03d}"


def file_path(root: Path, spec: WorldSpec, c: int, f: int, binary: bool) -> Path:
    return root / chunk_name(spec, c) / f"f{f:03d}.{'glb' if binary else 'gltf'}"


def generate(root: Path, spec: WorldSpec, freq: dict | None = None) -> dict:
    """Write the world under ``root``; returns a summary (files, draws, bytes)."""
    freq = freq or load_frequencies()
    props = palette(freq, spec.props, spec.seed)
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(props))]
    rng = random.Random(f"world-{spec.seed}")
    root = Path(root)
    draws = size = 0
    for c in range(spec.chunks):
        (root / chunk_name(spec, c)).mkdir(parents=True, exist_ok=True)
        for f in range(spec.files_per_chunk):
            n = rng.randint(1, max(1, 2 * spec.draws_per_file - 1))
            chosen = rng.choices(props, weights=weights, k=n)
            binary = rng.random() < spec.glb_fraction
            data = file_bytes(chosen, binary)
            file_path(root, spec, c, f, binary).write_bytes(data)
            draws += n
            size += len(data)
    return {"files": spec.files, "chunks": spec.chunks, "draws": draws, "bytes": size, "props": len(props)}


def novel_props() -> list[Prop]:
    """Props with feature combinations a sampled palette practically never holds (new keys)."""
    attributes = (("POSITION", "POSITION"), ("NORMAL", "NORMAL"), ("TANGENT", "TANGENT"), ("TEXCOORD_0", "TEXCOORD"),
                  ("TEXCOORD_1", "TEXCOORD"), ("COLOR_0", "COLOR4"), ("JOINTS_0", "JOINTS"), ("WEIGHTS_0", "WEIGHTS"),
                  ("JOINTS_1", "JOINTS"), ("WEIGHTS_1", "WEIGHTS"))
    texture = {"index": 0, "texCoord": 1, "extensions": {"KHR_texture_transform": {"scale": [2.0, 2.0]}}}
    props = []
    for alpha, extensions in (("MASK", ("clearcoat", "sheen", "transmission", "volume", "iridescence")),
                              ("BLEND", ("anisotropy", "transmission", "sheen"))):
        mat = {"alphaMode": alpha, "normalTexture": texture, "occlusionTexture": texture,
               "pbrMetallicRoughness": {"baseColorTexture": texture, "metallicRoughnessTexture": texture},
               "extensions": dict(_EXTENSIONS[e] for e in extensions)}
        used = tuple(sorted(_EXTENSIONS[e][0] for e in extensions)) + ("KHR_texture_transform",)
        props.append(Prop(attributes, (("POSITION", "NORMAL", "TANGENT"),) * 5, 4,
                          orjson.dumps(mat, option=orjson.OPT_SORT_KEYS).decode(), True, alpha == "MASK", False, used))
    return props


def edit_chunk(root: Path, spec: WorldSpec, chunk: int = 0, freq: dict | None = None) -> str:
    """Rewrite the first file of ``chunk``: two palette props plus :func:`novel_props` (a few new keys).

    Returns the chunk name.
    """
    freq = freq or load_frequencies()
    folder = root / chunk_name(spec, chunk)
    path = sorted(folder.iterdir())[0]
    base = palette(freq, spec.props, spec.seed)[:2]
    path.write_bytes(file_bytes(base + novel_props(), path.suffix == ".glb"))
    return chunk_name(spec, chunk)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--files", type=int, default=100, help="files per chunk")
    parser.add_argument("--draws", type=int, default=6, help="mean draws per file")
    parser.add_argument("--props", type=int, default=WorldSpec.props, help="prop palette size")
    parser.add_argument("--levels", type=int, default=WorldSpec.levels,
                        help="levels the chunks are spread over (1: the whole world is one level)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.levels < 1:
        parser.error("--levels must be at least 1")
    spec = WorldSpec(args.chunks, args.files, args.draws, args.seed, args.props, args.levels)
    print(json.dumps(generate(args.out, spec)))


if __name__ == "__main__":
    sys.exit(main())
