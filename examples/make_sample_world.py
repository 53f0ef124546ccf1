"""Generate the bundled sample world in examples/sample_world (or a folder given as argument).

    python examples/make_sample_world.py [OUT]

Two levels, eight chunks, each chunk a folder of glTF 2.0 files (.gltf with embedded
``data:`` buffers and .glb), with the material and mesh variety of real levels:

=================  ==========================================================================
chunk              content (unique to the chunk first, then shared materials)
=================  ==========================================================================
forest/c00         EXT_mesh_gpu_instancing trees; textured ground with normal map + tangents,
                   MASK double-sided leaves, bark, a directional light
forest/c01         a morph-target banner (POSITION + NORMAL targets); rocks with a normal map
                   and no tangents, leaves, bark
forest/c02         baked occlusion on TEXCOORD_1, VEC3 vertex colors, a mirrored node
                   (negative scale), a point light; ground, rocks
town/market        clearcoat car paint with KHR_materials_variants, an unlit sign, an
                   all-white COLOR_0 crate, sheen awnings; ground, glass
town/square        a skinned character (JOINTS_0/WEIGHTS_0 + skin), KHR_texture_transform
                   paving, a spot light; emissive lamps, rocks, leaves
town/interior      VEC4 vertex colors; BLEND glass with transmission + volume + ior, sheen
                   fabric, emissive lamps (KHR_materials_emissive_strength), a point light
forest/c03         the MaterialX family (rules/mtlx.yaml): documents named by extras.materialx
                   (surfaces/rust.mtlx, surfaces/glaze.mtlx) and glTF materials as gltf_pbr
                   graphs (a textured slate; two paints differing only in constants: one key)
town/workshop      the fragment-chain family (rules/chain.yaml): plaster and brick lit by a
                   directional, two point and a spot light (one lighting fragment per type)
=================  ==========================================================================

Determinism: the output is the same bytes on every run and machine.  Geometry comes
from the small primitives below (numpy only, coordinates rounded to 1e-5 before the
float32 cast, so neither a library upgrade nor libm rounding can change a byte);
PNGs use stored (uncompressed) deflate blocks, so no zlib version matters; JSON keeps
insertion order.  Unchanged files are not rewritten (pipeline.outputs.atomic.write_if_changed).
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.outputs.atomic import write_if_changed

FLOAT, UBYTE, USHORT = 5126, 5121, 5123
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}
DEFAULT_OUT = Path(__file__).resolve().parent / "sample_world"


# ================================================================== geometry
@dataclass
class Geometry:
    """Triangle geometry; optional attributes are None when absent."""

    positions: np.ndarray
    normals: np.ndarray
    uvs: np.ndarray
    indices: np.ndarray
    tangents: np.ndarray | None = None

    def moved(self, offset, scale=1.0) -> "Geometry":
        return Geometry(self.positions * scale + np.asarray(offset), self.normals, self.uvs,
                        self.indices, self.tangents)


def _quad_indices(rows: int, cols: int) -> np.ndarray:
    """Two counter-clockwise triangles per cell of a (rows+1) x (cols+1) vertex grid."""
    out = []
    for r in range(rows):
        for c in range(cols):
            a, b = r * (cols + 1) + c, r * (cols + 1) + c + 1
            d, e = a + cols + 1, b + cols + 1
            out += [a, d, b, b, d, e]
    return np.array(out, dtype=np.uint16)


def box(size=(1.0, 1.0, 1.0)) -> Geometry:
    """A box centred at the origin: 24 vertices (flat normals), UVs and tangents."""
    half = np.asarray(size) / 2
    pos, nrm, uv, tan, idx = [], [], [], [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.eye(3)[axis] * sign
            u = np.eye(3)[(axis + 1) % 3] * sign
            v = np.cross(n, u)
            base = len(pos)
            for s, t in ((0, 0), (1, 0), (1, 1), (0, 1)):
                pos.append((n + u * (2 * s - 1) + v * (2 * t - 1)) * half)
                nrm.append(n)
                uv.append((s, 1 - t))
                tan.append((*u, 1.0))
            idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return Geometry(np.array(pos), np.array(nrm), np.array(uv), np.array(idx, np.uint16), np.array(tan))


def plane(size=1.0, divisions=1, uv_scale=1.0) -> Geometry:
    """A square in the XZ plane facing +Y, with tangents along +X."""
    steps = np.linspace(-size / 2, size / 2, divisions + 1)
    xs, zs = np.meshgrid(steps, steps)
    count = xs.size
    pos = np.stack([xs.ravel(), np.zeros(count), zs.ravel()], axis=1)
    uv = (pos[:, [0, 2]] / size + 0.5) * uv_scale
    tangents = np.tile([1.0, 0.0, 0.0, 1.0], (count, 1))
    return Geometry(pos, np.tile([0.0, 1.0, 0.0], (count, 1)), uv, _quad_indices(divisions, divisions), tangents)


def banner(width=1.0, height=1.5, divisions=3) -> Geometry:
    """A vertical grid in the XY plane facing +Z (the morph-target cloth)."""
    xs, ys = np.meshgrid(np.linspace(0, width, divisions + 1), np.linspace(height, 0, divisions + 1))
    pos = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1)
    uv = np.stack([xs.ravel() / width, 1 - ys.ravel() / height], axis=1)
    indices = _quad_indices(divisions, divisions)
    return Geometry(pos, np.tile([0.0, 0.0, 1.0], (xs.size, 1)), uv, indices)


def sphere(radius=0.5, rings=4, segments=6) -> Geometry:
    """A low-poly UV sphere (seam vertices duplicated), no tangents."""
    theta = np.linspace(0, np.pi, rings + 1)[:, None]
    phi = np.linspace(0, 2 * np.pi, segments + 1)[None, :]
    nrm = np.stack(np.broadcast_arrays(np.sin(theta) * np.cos(phi), np.cos(theta),
                                       -np.sin(theta) * np.sin(phi)), axis=-1).reshape(-1, 3)
    uv = np.stack(np.broadcast_arrays(phi / (2 * np.pi), theta / np.pi), axis=-1).reshape(-1, 2)
    return Geometry(nrm * radius, nrm, uv, _quad_indices(rings, segments))


def cylinder(radius=0.15, height=1.0, segments=6) -> Geometry:
    """An open cylinder along +Y from y=0 (tree trunks, the character's body)."""
    phi = np.linspace(0, 2 * np.pi, segments + 1)
    ring = np.stack([np.cos(phi), np.zeros_like(phi), -np.sin(phi)], axis=1)
    pos = np.concatenate([ring * radius + [0, height, 0], ring * radius])
    uv = np.stack([np.tile(phi / (2 * np.pi), 2), np.repeat([0.0, 1.0], segments + 1)], axis=1)
    return Geometry(pos, np.concatenate([ring, ring]), uv, _quad_indices(1, segments))


# ================================================================== images
def png(pixels: np.ndarray) -> bytes:
    """A PNG (RGBA 8-bit) with stored deflate blocks: no compressor, stable bytes."""
    height, width, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[row].astype(np.uint8).tobytes() for row in range(height))
    stored = b"\x78\x01\x01" + struct.pack("<HH", len(raw), len(raw) ^ 0xFFFF) + raw
    idat = stored + struct.pack(">I", zlib.adler32(raw))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _checker(a, b) -> np.ndarray:
    cells = (np.indices((4, 4)).sum(axis=0) % 2)[..., None]
    return np.where(cells, np.array(a), np.array(b))


IMAGES = {
    "albedo": lambda: _checker((170, 140, 100, 255), (120, 100, 70, 255)),
    "normal": lambda: _checker((128, 128, 255, 255), (140, 128, 250, 255)),
    "orm": lambda: _checker((255, 200, 0, 255), (230, 150, 0, 255)),
    "leaf": lambda: _checker((60, 140, 50, 255), (0, 0, 0, 0)),
    "emissive": lambda: _checker((255, 220, 150, 255), (255, 180, 90, 255)),
    "baked_ao": lambda: _checker((255, 255, 255, 255), (160, 160, 160, 255)),
}


# ================================================================== glTF builder
@dataclass
class Gltf:
    """Accumulates one glTF document and its single binary buffer."""

    name: str
    binary: bool
    doc: dict = field(default_factory=dict)
    data: bytearray = field(default_factory=bytearray)
    used: set = field(default_factory=set)
    _materials: dict = field(default_factory=dict)
    _textures: dict = field(default_factory=dict)

    def __post_init__(self):
        self.doc = {"asset": {"version": "2.0", "generator": "permutation-pipeline make_sample_world.py"},
                    "scene": 0, "scenes": [{"name": self.name, "nodes": []}], "nodes": [], "meshes": [],
                    "materials": [], "accessors": [], "bufferViews": [], "buffers": []}

    # ---------------------------------------------------------- buffers
    def view(self, payload: bytes, target: int | None = None) -> int:
        self.data += bytes(-len(self.data) % 4)
        view = {"buffer": 0, "byteOffset": len(self.data), "byteLength": len(payload)}
        if target is not None:
            view["target"] = target
        self.data += payload
        return _append(self.doc["bufferViews"], view)

    def accessor(self, values, component=FLOAT, target=ARRAY_BUFFER, normalized=False, bounds=False) -> int:
        array = np.asarray(values)
        array = array.reshape(len(array), -1) if array.ndim > 1 else array.reshape(-1, 1)
        array = _cast(array, component)
        acc = {"bufferView": self.view(array.tobytes(), target), "componentType": component,
               "count": len(array), "type": TYPES[array.shape[1]]}
        if normalized:
            acc["normalized"] = True
        if bounds:
            acc["min"] = [float(v) for v in array.min(axis=0)]
            acc["max"] = [float(v) for v in array.max(axis=0)]
        return _append(self.doc["accessors"], acc)

    # ---------------------------------------------------------- meshes
    def attributes(self, g: Geometry, *, tangents=False, uv1=False) -> dict:
        attrs = {"POSITION": self.accessor(g.positions, bounds=True), "NORMAL": self.accessor(g.normals),
                 "TEXCOORD_0": self.accessor(g.uvs)}
        if tangents:
            attrs["TANGENT"] = self.accessor(g.tangents)
        if uv1:
            attrs["TEXCOORD_1"] = self.accessor(g.uvs * 0.5 + 0.25)
        return attrs

    def primitive(self, g: Geometry, material: str, **attr_options) -> dict:
        return {"attributes": self.attributes(g, **attr_options),
                "indices": self.accessor(g.indices, USHORT, ELEMENT_ARRAY_BUFFER),
                "material": self.material(material)}

    def mesh(self, name: str, *primitives: dict, **extra) -> int:
        return _append(self.doc["meshes"], {"name": name, "primitives": list(primitives), **extra})

    def node(self, name: str, *, root=True, **props) -> int:
        index = _append(self.doc["nodes"], {"name": name, **props})
        if root:
            self.doc["scenes"][0]["nodes"].append(index)
        return index

    # ---------------------------------------------------------- materials, textures
    def material(self, name: str) -> int:
        if name not in self._materials:
            self._materials[name] = _append(self.doc["materials"], MATERIALS[name](self))
        return self._materials[name]

    def texture(self, image: str, tex_coord: int = 0, **extra) -> dict:
        if image not in self._textures:
            self._textures[image] = self._add_texture(image)
        info = {"index": self._textures[image], **extra}
        return {**info, "texCoord": tex_coord} if tex_coord else info

    def _add_texture(self, image: str) -> int:
        data = png(IMAGES[image]())
        if self.binary:
            entry = {"name": image, "bufferView": self.view(data), "mimeType": "image/png"}
        else:
            entry = {"name": image, "uri": "data:image/png;base64," + base64.b64encode(data).decode()}
        source = _append(self.doc.setdefault("images", []), entry)
        if "samplers" not in self.doc:
            self.doc["samplers"] = [{"magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497}]
        return _append(self.doc.setdefault("textures", []), {"sampler": 0, "source": source})

    def extension(self, name: str, block=None):
        """Mark an extension used; returns ``{name: block}`` for an ``extensions`` field."""
        self.used.add(name)
        return {name: {} if block is None else block}

    def light(self, name: str, light: dict) -> dict:
        lights = self.doc.setdefault("extensions", {}).setdefault("KHR_lights_punctual", {"lights": []})
        index = _append(lights["lights"], {"name": name, **light})
        return self.extension("KHR_lights_punctual", {"light": index})

    # ---------------------------------------------------------- output
    def finish(self) -> dict:
        self.data += bytes(-len(self.data) % 4)
        buffer = {"byteLength": len(self.data)}
        if not self.binary:
            buffer["uri"] = "data:application/octet-stream;base64," + base64.b64encode(self.data).decode()
        self.doc["buffers"] = [buffer]
        if self.used:
            self.doc["extensionsUsed"] = sorted(self.used)
        return self.doc

    def to_bytes(self) -> bytes:
        text = json.dumps(self.finish(), indent=1, ensure_ascii=False).encode()
        return _glb(text, bytes(self.data)) if self.binary else text + b"\n"


def _append(items: list, item) -> int:
    items.append(item)
    return len(items) - 1


def _cast(array: np.ndarray, component: int) -> np.ndarray:
    if component == FLOAT:
        return np.round(array.astype(np.float64), 5).astype("<f4")
    return np.round(array).astype("<u2" if component == USHORT else "u1")


def _glb(text: bytes, binary: bytes) -> bytes:
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<I4s", len(text), b"JSON") + text + struct.pack("<I4s", len(binary), b"BIN\x00") + binary
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


# ================================================================== materials (shared by name)
def _pbr(base=(1.0, 1.0, 1.0, 1.0), metallic=0.0, roughness=0.8, **textures) -> dict:
    return {"baseColorFactor": list(base), "metallicFactor": metallic, "roughnessFactor": roughness, **textures}


MATERIALS = {
    "ground": lambda g: {"name": "ground", "pbrMetallicRoughness": _pbr(
        baseColorTexture=g.texture("albedo"), metallicRoughnessTexture=g.texture("orm")),
        "normalTexture": {**g.texture("normal"), "scale": 1.0}},
    "rock": lambda g: {"name": "rock", "pbrMetallicRoughness": _pbr((0.6, 0.6, 0.6, 1.0), 0.0, 0.9,
                                                                   baseColorTexture=g.texture("albedo")),
                       "normalTexture": g.texture("normal")},
    "bark": lambda g: {"name": "bark", "pbrMetallicRoughness": _pbr((0.4, 0.3, 0.2, 1.0),
                                                                   baseColorTexture=g.texture("albedo"))},
    "leaves": lambda g: {"name": "leaves", "alphaMode": "MASK", "alphaCutoff": 0.5, "doubleSided": True,
                         "pbrMetallicRoughness": _pbr(baseColorTexture=g.texture("leaf"))},
    "glass": lambda g: {"name": "glass", "alphaMode": "BLEND", "pbrMetallicRoughness": _pbr(
        (0.9, 0.95, 1.0, 0.2), 0.0, 0.05), "extensions": {
        **g.extension("KHR_materials_transmission", {"transmissionFactor": 0.95}),
        **g.extension("KHR_materials_volume", {"thicknessFactor": 0.02, "attenuationDistance": 0.5,
                                               "attenuationColor": [0.9, 1.0, 0.95]}),
        **g.extension("KHR_materials_ior", {"ior": 1.5})}},
    "metal": lambda g: {"name": "metal", "pbrMetallicRoughness": _pbr((0.3, 0.3, 0.32, 1.0), 1.0, 0.4)},
    "vertex_paint": lambda g: {"name": "vertex_paint", "pbrMetallicRoughness": _pbr(roughness=0.7)},
    "baked_wood": lambda g: {"name": "baked_wood", "pbrMetallicRoughness": _pbr(
        (0.7, 0.5, 0.3, 1.0), baseColorTexture=g.texture("albedo")),
        "occlusionTexture": {**g.texture("baked_ao", tex_coord=1), "strength": 1.0}},
    "banner_cloth": lambda g: {"name": "banner_cloth", "doubleSided": True,
                               "pbrMetallicRoughness": _pbr((0.8, 0.1, 0.1, 1.0),
                                                            baseColorTexture=g.texture("albedo"))},
    "sign": lambda g: {"name": "sign", "pbrMetallicRoughness": _pbr(baseColorTexture=g.texture("albedo")),
                       "extensions": g.extension("KHR_materials_unlit")},
    "car_paint_red": lambda g: _car_paint(g, "car_paint_red", (0.7, 0.02, 0.02, 1.0)),
    "car_paint_blue": lambda g: _car_paint(g, "car_paint_blue", (0.02, 0.1, 0.7, 1.0)),
    "fabric": lambda g: {"name": "fabric", "pbrMetallicRoughness": _pbr((0.5, 0.2, 0.6, 1.0), roughness=1.0),
                         "extensions": g.extension("KHR_materials_sheen", {
                             "sheenColorFactor": [0.9, 0.7, 1.0], "sheenRoughnessFactor": 0.5})},
    "lamp": lambda g: {"name": "lamp", "pbrMetallicRoughness": _pbr((0.2, 0.2, 0.2, 1.0)),
                       "emissiveFactor": [1.0, 0.85, 0.6], "emissiveTexture": g.texture("emissive"),
                       "extensions": g.extension("KHR_materials_emissive_strength", {"emissiveStrength": 6.0})},
    "paving": lambda g: {"name": "paving", "pbrMetallicRoughness": _pbr(baseColorTexture=g.texture(
        "albedo", extensions=g.extension("KHR_texture_transform", {
            "offset": [0.0, 0.5], "rotation": 0.25, "scale": [4.0, 4.0]})))},
    "skin": lambda g: {"name": "skin", "pbrMetallicRoughness": _pbr((0.8, 0.6, 0.5, 1.0), roughness=0.6,
                                                                   baseColorTexture=g.texture("albedo"))},
    # generated families: a fragment chain (rules/chain.yaml) and MaterialX graphs (rules/mtlx.yaml)
    "plaster": lambda g: {"name": "plaster", "pbrMetallicRoughness": _pbr((0.85, 0.8, 0.7, 1.0)),
                          "extras": {"shader": "chain"}},
    "brick": lambda g: {"name": "brick", "pbrMetallicRoughness": _pbr(baseColorTexture=g.texture("albedo")),
                        "extras": {"shader": "chain"}},
    "rust": lambda g: {"name": "rust", "pbrMetallicRoughness": _pbr(),
                       "extras": {"shader": "mtlx", "materialx": "surfaces/rust.mtlx#M_rust"}},
    "glaze": lambda g: {"name": "glaze", "pbrMetallicRoughness": _pbr(),
                        "extras": {"shader": "mtlx", "materialx": "surfaces/glaze.mtlx#M_glaze"}},
    "slate": lambda g: {"name": "slate", "pbrMetallicRoughness": _pbr(
        baseColorTexture=g.texture("albedo"), metallicRoughnessTexture=g.texture("orm")),
        "normalTexture": g.texture("normal"), "extras": {"shader": "mtlx"}},
    "paint_green": lambda g: {"name": "paint_green", "pbrMetallicRoughness": _pbr((0.1, 0.5, 0.1, 1.0)),
                              "extras": {"shader": "mtlx"}},
    "paint_yellow": lambda g: {"name": "paint_yellow", "pbrMetallicRoughness": _pbr((0.9, 0.8, 0.1, 1.0), 0.2),
                               "extras": {"shader": "mtlx"}},
}


def _car_paint(g: Gltf, name: str, color) -> dict:
    return {"name": name, "pbrMetallicRoughness": _pbr(color, 0.9, 0.35),
            "extensions": g.extension("KHR_materials_clearcoat", {
                "clearcoatFactor": 1.0, "clearcoatRoughnessFactor": 0.05})}


# ================================================================== chunk content
def _rocks(g: Gltf, spots) -> None:
    mesh = g.mesh("rock", g.primitive(sphere(0.6, 3, 5), "rock"))  # normal map, no TANGENT
    for i, (x, z) in enumerate(spots):
        g.node(f"rock_{i}", mesh=mesh, translation=[x, 0.3, z], scale=[1.0, 0.6, 1.2])


def _bushes(g: Gltf, spots) -> None:
    mesh = g.mesh("bush", g.primitive(sphere(0.5, 3, 6), "leaves"))
    for i, (x, z) in enumerate(spots):
        g.node(f"bush_{i}", mesh=mesh, translation=[x, 0.4, z])


def _ground(g: Gltf, size=16.0) -> None:
    g.node("ground", mesh=g.mesh("ground", g.primitive(plane(size, 2, 4.0), "ground", tangents=True)))


def _lamps(g: Gltf, spots) -> None:
    post = g.primitive(cylinder(0.05, 2.0, 6), "metal")
    bulb = g.primitive(sphere(0.15, 3, 6).moved([0, 2.1, 0]), "lamp")
    mesh = g.mesh("lamp", post, bulb)
    for i, (x, z) in enumerate(spots):
        g.node(f"lamp_{i}", mesh=mesh, translation=[x, 0.0, z])


def _colored_box(g: Gltf, name: str, size, colors: np.ndarray, normalized_ubyte=False) -> int:
    geometry = box(size)
    prim = g.primitive(geometry, "vertex_paint")
    if normalized_ubyte:
        prim["attributes"]["COLOR_0"] = g.accessor(colors * 255, UBYTE, normalized=True)
    else:
        prim["attributes"]["COLOR_0"] = g.accessor(colors)
    return g.mesh(name, prim)


def _vertex_colors(count: int, channels: int) -> np.ndarray:
    ramp = np.linspace(0.2, 1.0, count)[:, None]
    rgb = np.concatenate([ramp, 1.0 - ramp * 0.5, np.full((count, 1), 0.4)], axis=1)
    return rgb if channels == 3 else np.concatenate([rgb, np.full((count, 1), 0.8)], axis=1)


def forest_terrain() -> Gltf:
    g = Gltf("forest_c00_terrain", binary=False)
    _ground(g)
    g.node("sun", rotation=[-0.3826834, 0.0, 0.0, 0.9238795],
           extensions=g.light("sun", {"type": "directional", "color": [1.0, 0.95, 0.85], "intensity": 3.0}))
    return g


def forest_trees() -> Gltf:
    g = Gltf("forest_c00_trees", binary=True)
    trunk = g.primitive(cylinder(0.15, 1.2, 6), "bark")
    crown = g.primitive(sphere(0.7, 3, 6).moved([0, 1.6, 0]), "leaves")
    mesh = g.mesh("tree", trunk, crown)
    spots = np.array([[x, 0.0, z] for x in (-6.0, -2.0, 2.0, 6.0) for z in (-5.0, 0.0, 5.0)])
    yaw = np.linspace(0, np.pi, len(spots))
    rotations = np.stack([np.zeros_like(yaw), np.sin(yaw / 2), np.zeros_like(yaw), np.cos(yaw / 2)], axis=1)
    scales = np.repeat(np.linspace(0.8, 1.3, len(spots))[:, None], 3, axis=1)
    attributes = {"TRANSLATION": g.accessor(spots, target=None), "ROTATION": g.accessor(rotations, target=None),
                  "SCALE": g.accessor(scales, target=None)}
    g.node("forest", mesh=mesh, extensions=g.extension("EXT_mesh_gpu_instancing", {"attributes": attributes}))
    return g


def forest_rocks() -> Gltf:
    g = Gltf("forest_c01_rocks", binary=False)
    _rocks(g, [(-3.0, 2.0), (1.5, -2.5), (4.0, 3.0)])
    _bushes(g, [(-1.0, -1.0), (2.5, 1.0)])
    g.node("stump", mesh=g.mesh("stump", g.primitive(cylinder(0.3, 0.4, 8), "bark")), translation=[0.0, 0.0, 4.0])
    return g


def forest_banner() -> Gltf:
    g = Gltf("forest_c01_banner", binary=True)
    cloth = banner()
    prim = g.primitive(cloth, "banner_cloth")
    sway = np.zeros_like(cloth.positions)
    sway[:, 2] = np.round((1.5 - cloth.positions[:, 1]) * 0.2, 5)
    bend = np.zeros_like(cloth.normals)
    bend[:, 1] = -0.1 * (cloth.positions[:, 0] > 0.5)
    prim["targets"] = [{"POSITION": g.accessor(sway, bounds=True), "NORMAL": g.accessor(bend)},
                       {"POSITION": g.accessor(-sway, bounds=True), "NORMAL": g.accessor(-bend)}]
    mesh = g.mesh("banner", prim, weights=[0.0, 0.0], extras={"targetNames": ["wind_left", "wind_right"]})
    pole = g.mesh("pole", g.primitive(cylinder(0.04, 2.5, 6), "bark"))
    pole_node = g.node("pole", mesh=pole, translation=[0.0, 0.0, -2.0])
    g.node("banner", root=False, mesh=mesh, translation=[0.05, 1.0, 0.0])
    g.doc["nodes"][pole_node]["children"] = [pole_node + 1]
    return g


def forest_cabin() -> Gltf:
    g = Gltf("forest_c02_cabin", binary=False)
    _ground(g)
    walls = g.mesh("cabin_walls", g.primitive(box((4.0, 2.5, 3.0)), "baked_wood", uv1=True))
    g.node("cabin", mesh=walls, translation=[0.0, 1.25, 0.0])
    wing = g.mesh("cabin_wing", g.primitive(box((2.0, 2.0, 2.0)).moved([1.0, 0.0, 0.0]), "baked_wood", uv1=True))
    g.node("wing_east", mesh=wing, translation=[2.0, 1.0, 0.0])
    g.node("wing_west_mirrored", mesh=wing, translation=[-2.0, 1.0, 0.0], scale=[-1.0, 1.0, 1.0])
    crates = _colored_box(g, "crate_painted", (0.8, 0.8, 0.8), _vertex_colors(24, 3))
    for i, x in enumerate((3.0, 3.9)):
        g.node(f"crate_{i}", mesh=crates, translation=[x, 0.4, 2.5])
    _rocks(g, [(-5.0, -4.0)])
    g.node("hearth_light", translation=[0.0, 1.5, 0.0],
           extensions=g.light("hearth", {"type": "point", "color": [1.0, 0.6, 0.3], "intensity": 20.0, "range": 8.0}))
    return g


def town_stalls() -> Gltf:
    g = Gltf("town_market_stalls", binary=False)
    _ground(g, 20.0)
    awning = g.mesh("awning", g.primitive(plane(2.0, 1), "fabric"))
    for i, x in enumerate((-3.0, 0.0, 3.0)):
        g.node(f"awning_{i}", mesh=awning, translation=[x, 2.2, -4.0], rotation=[0.0871557, 0.0, 0.0, 0.9961947])
    sign = g.mesh("sign", g.primitive(box((1.5, 0.5, 0.05)), "sign"))
    g.node("market_sign", mesh=sign, translation=[0.0, 3.0, -5.0])
    white = _colored_box(g, "crate_white", (0.6, 0.6, 0.6), np.ones((24, 3)))
    g.node("crate_white", mesh=white, translation=[4.5, 0.3, -3.0])
    window = g.mesh("shop_window", g.primitive(box((2.0, 1.2, 0.02)), "glass"))
    g.node("shop_window", mesh=window, translation=[-6.0, 1.5, -5.0])
    return g


def town_car() -> Gltf:
    g = Gltf("town_market_car", binary=True)
    body = g.primitive(box((1.8, 0.6, 4.0)).moved([0.0, 0.5, 0.0]), "car_paint_red")
    variants = {"mappings": [{"material": g.material("car_paint_red"), "variants": [0]},
                             {"material": g.material("car_paint_blue"), "variants": [1]}]}
    body["extensions"] = g.extension("KHR_materials_variants", variants)
    cabin = g.primitive(box((1.6, 0.5, 2.0)).moved([0.0, 1.05, -0.2]), "glass")
    wheel = g.mesh("wheel", g.primitive(cylinder(0.35, 0.25, 8), "rock"))
    car = g.node("car", mesh=g.mesh("car_body", body, cabin), translation=[6.0, 0.0, 2.0])
    axle = [0.0, 0.0, 0.7071068, 0.7071068]
    wheels = [g.node(f"wheel_{i}", root=False, mesh=wheel, translation=[x, 0.35, z], rotation=axle)
              for i, (x, z) in enumerate([(-1.0, 1.3), (1.0, 1.3), (-1.0, -1.3), (1.0, -1.3)])]
    g.doc["nodes"][car]["children"] = wheels
    g.doc["extensions"] = {**g.doc.get("extensions", {}), **g.extension(
        "KHR_materials_variants", {"variants": [{"name": "red"}, {"name": "blue"}]})}
    return g


def town_plaza() -> Gltf:
    g = Gltf("town_square_plaza", binary=False)
    g.node("paving", mesh=g.mesh("paving", g.primitive(plane(20.0, 2), "paving")))
    _rocks(g, [(-7.0, 7.0), (7.0, -7.0)])
    _bushes(g, [(-4.0, 4.0), (4.0, 4.0), (-4.0, -4.0), (4.0, -4.0)])
    _lamps(g, [(-3.0, 0.0), (3.0, 0.0)])
    g.node("stage_spot", translation=[0.0, 6.0, 0.0], rotation=[-0.7071068, 0.0, 0.0, 0.7071068],
           extensions=g.light("stage", {"type": "spot", "color": [1.0, 1.0, 0.9], "intensity": 40.0,
                                        "spot": {"innerConeAngle": 0.3, "outerConeAngle": 0.6}}))
    return g


def town_character() -> Gltf:
    g = Gltf("town_square_character", binary=True)
    body = cylinder(0.25, 1.8, 8)
    prim = g.primitive(body, "skin")
    heights = body.positions[:, 1] / 1.8
    weights = np.stack([1.0 - heights, heights, np.zeros_like(heights), np.zeros_like(heights)], axis=1)
    joints = np.zeros((len(heights), 4))
    joints[:, 1] = heights > 0  # a joint with zero weight must be 0
    prim["attributes"]["JOINTS_0"] = g.accessor(joints, UBYTE)
    prim["attributes"]["WEIGHTS_0"] = g.accessor(weights)
    inverse_bind = np.array([np.eye(4), np.eye(4)])
    inverse_bind[1][1, 3] = -0.9  # column-major storage below: translation in the last column
    matrices = g.accessor(inverse_bind.transpose(0, 2, 1).reshape(2, 16), target=None)
    g.doc["skins"] = [{"name": "villager_rig", "joints": [1, 2], "inverseBindMatrices": matrices, "skeleton": 1}]
    g.node("villager", mesh=g.mesh("villager", prim), skin=0)
    g.node("hip", children=[2], translation=[0.0, 0.0, 0.0])
    g.node("spine", root=False, translation=[0.0, 0.9, 0.0], rotation=[0.0, 0.0, 0.0998334, 0.9950042])
    return g


def town_room() -> Gltf:
    g = Gltf("town_interior_room", binary=True)
    floor = g.mesh("floor", g.primitive(plane(8.0, 1, 2.0), "ground", tangents=True))
    g.node("floor", mesh=floor)
    rug = _colored_box(g, "rug", (3.0, 0.02, 2.0), _vertex_colors(24, 4), normalized_ubyte=True)
    g.node("rug", mesh=rug, translation=[0.0, 0.01, 0.0])
    couch = g.mesh("couch", g.primitive(box((2.2, 0.8, 0.9)), "fabric"))
    g.node("couch", mesh=couch, translation=[0.0, 0.4, -2.5])
    window = g.mesh("window", g.primitive(box((1.6, 1.2, 0.04)), "glass"))
    g.node("window", mesh=window, translation=[3.9, 1.6, 0.0], rotation=[0.0, 0.7071068, 0.0, 0.7071068])
    _lamps(g, [(-3.0, -3.0)])
    g.node("ceiling_light", translation=[0.0, 2.8, 0.0],
           extensions=g.light("ceiling", {"type": "point", "color": [1.0, 0.9, 0.8], "intensity": 15.0}))
    return g


def town_workshop() -> Gltf:
    """A fragment-chain chunk: plaster and brick lit by a directional, two point and a spot light."""
    g = Gltf("town_workshop", binary=False)
    g.node("floor", mesh=g.mesh("workshop_floor", g.primitive(plane(10.0, 1), "plaster")))
    wall = g.mesh("workshop_wall", g.primitive(box((10.0, 3.0, 0.3)), "brick"))
    g.node("wall_north", mesh=wall, translation=[0.0, 1.5, -5.0])
    g.node("bench", mesh=g.mesh("bench", g.primitive(box((2.0, 0.9, 0.8)), "plaster")), translation=[0.0, 0.45, -3.0])
    g.node("sun", rotation=[-0.3826834, 0.0, 0.0, 0.9238795],
           extensions=g.light("sun", {"type": "directional", "color": [1.0, 0.95, 0.9], "intensity": 3.0}))
    for i, x in enumerate((-3.0, 3.0)):
        g.node(f"bulb_{i}", translation=[x, 2.5, -3.0],
               extensions=g.light(f"bulb_{i}", {"type": "point", "color": [1.0, 0.8, 0.6], "intensity": 10.0}))
    g.node("bench_spot", translation=[0.0, 2.8, -3.0], rotation=[-0.7071068, 0.0, 0.0, 0.7071068],
           extensions=g.light("bench_spot", {"type": "spot", "color": [1.0, 1.0, 1.0], "intensity": 30.0,
                                             "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.5}}))
    return g


def forest_shrine() -> Gltf:
    """A MaterialX chunk: documents (rust, glaze) and glTF materials as gltf_pbr graphs."""
    g = Gltf("forest_c03_shrine", binary=True)
    g.node("plinth", mesh=g.mesh("plinth", g.primitive(box((2.0, 0.5, 2.0)), "slate", tangents=True)))
    g.node("bell", mesh=g.mesh("bell", g.primitive(sphere(0.5), "rust")), translation=[0.0, 1.5, 0.0])
    g.node("urn", mesh=g.mesh("urn", g.primitive(cylinder(0.3, 0.8), "glaze")), translation=[1.5, 0.4, 0.0])
    for i, (name, x) in enumerate((("paint_green", -1.5), ("paint_yellow", -2.5))):
        post = g.mesh(f"post_{i}", g.primitive(box((0.2, 2.0, 0.2)), name))
        g.node(f"post_{i}", mesh=post, translation=[x, 1.0, 0.0])
    return g


FILES = {
    "forest/c00/terrain.gltf": forest_terrain,
    "forest/c00/trees.glb": forest_trees,
    "forest/c01/rocks.gltf": forest_rocks,
    "forest/c01/banner.glb": forest_banner,
    "forest/c02/cabin.gltf": forest_cabin,
    "town/market/stalls.gltf": town_stalls,
    "town/market/car.glb": town_car,
    "town/square/plaza.gltf": town_plaza,
    "town/square/character.glb": town_character,
    "town/interior/room.glb": town_room,
    "town/workshop/workshop.gltf": town_workshop,
    "forest/c03/shrine.glb": forest_shrine,
}


# The world's root marker: `pipeline cook sample_world/forest` then cooks the forest
# level of this world (chunk names forest/c00 ...), as git finds a repository's root.
CONFIG = b"""# The sample world: levels are the first folder level (forest, town).
level_depth = 1
"""


def generate(out: Path | str = DEFAULT_OUT) -> dict[str, bytes]:
    """Write every file of the sample world under ``out``; returns {relative path: bytes}."""
    files = {rel: build().to_bytes() for rel, build in FILES.items()} | {"pipeline.toml": CONFIG}
    for rel, data in files.items():
        write_if_changed(Path(out) / rel, data)
    return files


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    files = generate(out)
    print(f"{out}: {len(files)} files, {sum(map(len, files.values()))} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
