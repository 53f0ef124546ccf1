"""What a render needs of one glTF file: its primitives with vertex data, transforms,
skins, morph targets, instances, materials and images, read with numpy through the
scanner's own reader (:mod:`pipeline.scan.gltf.reader`, :class:`~pipeline.scan.buffers.BufferData`).

Each primitive is named by the draw id the manifests use: (file, node, mesh, primitive,
material, variant=None).  Only triangle lists are read; a primitive whose positions
cannot be read (Draco or meshopt compressed, sparse, missing buffer) is skipped and
listed in ``skipped``.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import orjson

from pipeline.config import Limits
from pipeline.scan.buffers import BufferData
from pipeline.scan.gltf.reader import read_gltf
from pipeline.scan.gltf.transforms import local_matrix, world_matrices

TRIANGLES = 4


@dataclass
class Primitive:
    draw_id: tuple
    attributes: dict[str, np.ndarray]            # glTF attribute name -> (count, components) float64
    indices: np.ndarray | None                   # uint32, or None for a non-indexed draw
    model: np.ndarray                            # the node's world matrix
    material: dict                               # the glTF material object ({} for the default)
    joints: np.ndarray | None = None             # (n, 4, 4): inverse(model) @ jointWorld @ inverseBind
    targets: list[dict[str, np.ndarray]] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    instances: dict[str, np.ndarray] | None = None  # TRANSLATION / ROTATION / SCALE per instance

    @property
    def vertex_count(self) -> int:
        return len(self.attributes["POSITION"])

    def world_positions(self) -> np.ndarray:
        """Positions after morph targets, skinning, instancing and the node transform (what the GPU draws)."""
        p = self.attributes["POSITION"].copy()
        for t, w in zip(self.targets, self.weights):
            if "POSITION" in t:
                p += w * t["POSITION"]
        p = np.c_[p, np.ones(len(p))]
        if self.joints is not None and "JOINTS_0" in self.attributes:
            skin = np.zeros((len(p), 4, 4))
            for j, w in (("JOINTS_0", "WEIGHTS_0"), ("JOINTS_1", "WEIGHTS_1")):
                if j in self.attributes and w in self.attributes:
                    idx = self.attributes[j].astype(int)
                    skin += np.einsum("vk,vkij->vij", self.attributes[w], self.joints[idx])
            p = np.einsum("vij,vj->vi", skin, p)
        points = [p]
        if self.instances is not None:
            points = [(_trs(t, r, s) @ p.T).T for t, r, s in zip(self.instances["TRANSLATION"],
                                                               self.instances["ROTATION"],
                                                               self.instances["SCALE"])]
        return np.concatenate([(self.model @ q.T).T[:, :3] for q in points])


def _trs(t, r, s) -> np.ndarray:
    return local_matrix({"translation": list(t), "rotation": list(r), "scale": list(s)})


@dataclass
class Scene:
    file: str
    primitives: list[Primitive]
    images: dict[int, bytes]          # image index -> encoded bytes (PNG/JPEG)
    textures: list[dict]
    skipped: list[str]


def load_scene(root: Path, file: str, limits: Limits | None = None) -> Scene:
    """Every drawable triangle primitive of ``root/file``."""
    limits = limits or Limits()
    gltf = read_gltf(root / file, file, limits)
    data = BufferData(gltf, root, limits)
    doc = gltf.doc
    raw = orjson.loads(gltf.container.json)  # materials, textures and images as plain JSON
    worlds = world_matrices(doc)
    primitives, skipped = [], []
    for n, model in sorted(worlds.items()):
        node = raw["nodes"][n]
        if node.get("mesh") is None:
            continue
        m = node["mesh"]
        mesh = raw["meshes"][m]
        for p, prim in enumerate(mesh["primitives"]):
            draw = (file, n, m, p, prim.get("material"), None)
            got = _primitive(data, doc, raw, worlds, node, mesh, prim, draw, model)
            if isinstance(got, str):
                skipped.append(f"{file}: /meshes/{m}/primitives/{p}: {got}")
            else:
                primitives.append(got)
    images = {i: blob for i, img in enumerate(raw.get("images", []))
              if (blob := _image_bytes(gltf, data, img)) is not None}
    return Scene(file, primitives, images, list(raw.get("textures", [])), skipped)


def _primitive(data: BufferData, doc, raw: dict, worlds, node: dict, mesh: dict, prim: dict, draw: tuple, model):
    if prim.get("mode", TRIANGLES) != TRIANGLES:
        return "not a triangle list"
    attributes = {}
    for name, index in prim["attributes"].items():
        values = data.accessor(index)
        if values is not None:
            attributes[name] = values
    if "POSITION" not in attributes:
        return "positions cannot be read (compressed, sparse or missing buffer)"
    indices = None
    if prim.get("indices") is not None:
        values = data.accessor(prim["indices"])
        if values is None:
            return "indices cannot be read"
        indices = values.reshape(-1).astype(np.uint32)
    material = raw["materials"][draw[4]] if draw[4] is not None else {}
    out = Primitive(draw, attributes, indices, model, dict(material))
    out.targets = [{k: v for k, i in t.items() if (v := data.accessor(i)) is not None}
                   for t in prim.get("targets", [])]
    weights = node.get("weights") or mesh.get("weights") or []
    out.weights = [float(w) for w in weights][: len(out.targets)] + [0.0] * max(0, len(out.targets) - len(weights))
    if node.get("skin") is not None:
        out.joints = _joints(data, raw, worlds, node["skin"], model)
    instancing = (node.get("extensions") or {}).get("EXT_mesh_gpu_instancing")
    if instancing:
        out.instances = _instances(data, instancing["attributes"])
    return out


def _joints(data: BufferData, raw: dict, worlds, skin_index: int, model: np.ndarray) -> np.ndarray:
    skin = raw["skins"][skin_index]
    joints = skin["joints"]
    inverse_bind = np.tile(np.eye(4), (len(joints), 1, 1))
    if skin.get("inverseBindMatrices") is not None:
        values = data.accessor(skin["inverseBindMatrices"])
        if values is not None:
            inverse_bind = values.reshape(-1, 4, 4).transpose(0, 2, 1)  # column-major in the file
    to_mesh = np.linalg.inv(model)
    return np.stack([to_mesh @ worlds.get(j, np.eye(4)) @ inverse_bind[i] for i, j in enumerate(joints)])


def _instances(data: BufferData, attributes: dict) -> dict[str, np.ndarray] | None:
    values = {name: data.accessor(i) for name, i in attributes.items()}
    count = max((len(v) for v in values.values() if v is not None), default=0)
    if count == 0:
        return None
    defaults = {"TRANSLATION": (0.0, 0.0, 0.0), "ROTATION": (0.0, 0.0, 0.0, 1.0), "SCALE": (1.0, 1.0, 1.0)}
    return {name: (values.get(name) if values.get(name) is not None else np.tile(d, (count, 1)))
            for name, d in defaults.items()}


def _image_bytes(gltf, data: BufferData, image: dict) -> bytes | None:
    if image.get("bufferView") is not None:
        view = gltf.data().bufferViews[image["bufferView"]]
        buf = data.buffer(view["buffer"])
        if buf is None:
            return None
        start = view.get("byteOffset", 0)
        return bytes(buf[start:start + view["byteLength"]])
    uri = image.get("uri")
    if not uri:
        return None
    if uri.startswith("data:"):
        try:
            return base64.b64decode(uri[uri.index(",") + 1:])
        except ValueError:
            return None
    path = (gltf.path.parent / unquote(uri)).resolve()
    if not path.is_relative_to(data.root):
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def decode_image(blob: bytes) -> np.ndarray | None:
    """RGBA8 pixels of an encoded image (Pillow), or None when it cannot be decoded."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(blob)) as img:
            return np.asarray(img.convert("RGBA"), dtype=np.uint8)
    except (UnidentifiedImageError, OSError, ValueError):
        return None
