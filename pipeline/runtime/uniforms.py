"""The pbr family's uniform blocks as bytes (std140 layouts of materials/README.md).

Matrices are numpy row-major 4x4 (``M @ column vector``); std140 stores columns, so each
is written transposed.  Only what a render of one glTF file needs is filled: camera,
one directional light plus a flat ambient term, the object transform, the material's
core factors and which UV set each core texture slot reads.
"""

from __future__ import annotations

import struct

import numpy as np

FRAME_SIZE, LIGHT_SIZE, OBJECT_SIZE, MATERIAL_SIZE = 272, 1184, 144, 1120
ALPHA_MODES = {"OPAQUE": 0, "MASK": 1, "BLEND": 2}
# core texture slots (binding = slot + 1) and the material property naming them
CORE_SLOTS = {0: ("pbrMetallicRoughness", "baseColorTexture"), 1: ("pbrMetallicRoughness", "metallicRoughnessTexture"),
              2: (None, "normalTexture"), 3: (None, "occlusionTexture"), 4: (None, "emissiveTexture")}
_FLAG_BITS = {"BASE_COLOR_MAP": 0, "METALLIC_ROUGHNESS_MAP": 1, "NORMAL_MAP": 2, "OCCLUSION_MAP": 3,
              "EMISSIVE_MAP": 4, "DOUBLE_SIDED": 15}


def _mat(m: np.ndarray) -> bytes:
    return np.asarray(m, dtype="<f4").T.tobytes()


def frame_block(view: np.ndarray, projection: np.ndarray, eye: np.ndarray, size: tuple[int, int],
                light_direction: np.ndarray) -> bytes:
    w, h = size
    data = _mat(view) + _mat(projection) + _mat(projection @ view)
    data += struct.pack("<4f", *eye, 1.0) + struct.pack("<4f", w, h, 1 / w, 1 / h)
    data += struct.pack("<4f", *light_direction, 0.0) + struct.pack("<4f", 0.0, 0.0, 0.0, 0.0)
    data += struct.pack("<2f", 1.0, 1.0)
    return data + bytes(FRAME_SIZE - len(data))


def light_block(direction: np.ndarray, intensity: float = 3.0, ambient: float = 0.6) -> bytes:
    sh = struct.pack("<4f", ambient, ambient, ambient, 0.0) + bytes(16 * 8)
    data = sh + struct.pack("<i", 1) + bytes(12)
    light = struct.pack("<3ff", 0.0, 0.0, 0.0, 0.0) + struct.pack("<3ff", *direction, intensity)
    light += struct.pack("<3fi", 1.0, 1.0, 1.0, 0) + struct.pack("<2f", 1.0, 1.0) + bytes(8)
    data += light
    return data + bytes(LIGHT_SIZE - len(data))


def object_block(model: np.ndarray, morph_vertex_count: int = 0, morph_normal_offset: int = 0,
                 morph_tangent_offset: int = 0) -> bytes:
    normal = np.linalg.inv(model).T if abs(np.linalg.det(model[:3, :3])) > 1e-12 else np.eye(4)
    data = _mat(model) + _mat(normal) + struct.pack("<4I", 0, morph_vertex_count, morph_normal_offset,
                                                    morph_tangent_offset)
    return data + bytes(OBJECT_SIZE - len(data))


def material_block(material: dict, features: dict) -> bytes:
    """MaterialBlock of a glTF material (its JSON object; {} for the default material)."""
    pbr = material.get("pbrMetallicRoughness", {})
    mode = material.get("alphaMode", "OPAQUE")
    cutoff = material.get("alphaCutoff", 0.5) if mode == "MASK" else 0.0
    flags = 0
    for name, bit in _FLAG_BITS.items():
        if _present(material, name):
            flags |= 1 << bit
    data = struct.pack("<4f", *pbr.get("baseColorFactor", (1.0, 1.0, 1.0, 1.0)))
    data += struct.pack("<3ff", *material.get("emissiveFactor", (0.0, 0.0, 0.0)), 1.0)
    data += struct.pack("<4f", pbr.get("metallicFactor", 1.0), pbr.get("roughnessFactor", 1.0),
                        material.get("normalTexture", {}).get("scale", 1.0),
                        material.get("occlusionTexture", {}).get("strength", 1.0))
    data += struct.pack("<2f2I", cutoff, 1.5, flags, ALPHA_MODES.get(mode, 0))
    data += bytes(176 - len(data))  # extension factors: left at zero (their features are off)
    tex_coords = [-1] * 20
    for slot, (parent, name) in CORE_SLOTS.items():
        info = (material.get(parent, {}) if parent else material).get(name)
        if info is not None:
            tex_coords[slot] = int(info.get("texCoord", 0))
    data += struct.pack("<20i", *tex_coords)
    identity = struct.pack("<12f", 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0)
    data += identity * 18
    return data + bytes(MATERIAL_SIZE - len(data))


def _present(material: dict, flag: str) -> bool:
    pbr = material.get("pbrMetallicRoughness", {})
    return {"BASE_COLOR_MAP": "baseColorTexture" in pbr, "METALLIC_ROUGHNESS_MAP": "metallicRoughnessTexture" in pbr,
            "NORMAL_MAP": "normalTexture" in material, "OCCLUSION_MAP": "occlusionTexture" in material,
            "EMISSIVE_MAP": "emissiveTexture" in material,
            "DOUBLE_SIDED": bool(material.get("doubleSided"))}[flag]
