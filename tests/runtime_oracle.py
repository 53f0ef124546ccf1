"""An independent silhouette of a glTF file, for checking renders of the runtime.

Reads the file with pygltflib (not the pipeline's reader), evaluates node transforms,
default morph weights, skins at the rest pose and EXT_mesh_gpu_instancing with numpy,
projects the triangles with a given world -> clip matrix and fills pixel centres.
Static files are also checked against trimesh's own scene flattening (see the tests).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygltflib

_COUNT = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
_DTYPE = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}


def _accessor(gltf: pygltflib.GLTF2, index: int) -> np.ndarray:
    acc = gltf.accessors[index]
    view = gltf.bufferViews[acc.bufferView]
    data = gltf.get_data_from_buffer_uri(gltf.buffers[view.buffer].uri) if gltf.buffers[view.buffer].uri \
        else gltf.binary_blob()
    dtype = np.dtype(_DTYPE[acc.componentType])
    n = _COUNT[acc.type]
    stride = view.byteStride or dtype.itemsize * n
    start = (view.byteOffset or 0) + (acc.byteOffset or 0)
    out = np.ndarray((acc.count, n), dtype, buffer=data, offset=start, strides=(stride, dtype.itemsize)).astype(float)
    if acc.normalized:
        out = np.maximum(out / np.iinfo(dtype).max, -1.0)
    return out


def _local(node) -> np.ndarray:
    if node.matrix:
        return np.array(node.matrix, float).reshape(4, 4).T
    x, y, z, w = node.rotation or (0, 0, 0, 1)
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = r * np.array(node.scale or (1, 1, 1))
    m[:3, 3] = node.translation or (0, 0, 0)
    return m


def triangles(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """(world positions, triangle indices) of every triangle primitive of the file's scenes."""
    gltf = pygltflib.GLTF2().load(str(path))
    world: dict[int, np.ndarray] = {}
    for scene in gltf.scenes:
        stack = [(n, np.eye(4)) for n in scene.nodes]
        while stack:
            n, parent = stack.pop()
            world.setdefault(n, parent @ _local(gltf.nodes[n]))
            stack += [(c, world[n]) for c in gltf.nodes[n].children or []]
    out = []
    for n, matrix in world.items():
        node = gltf.nodes[n]
        if node.mesh is None:
            continue
        mesh = gltf.meshes[node.mesh]
        for prim in mesh.primitives:
            if prim.mode not in (None, 4):
                continue
            p = _accessor(gltf, prim.attributes.POSITION)
            weights = getattr(node, "weights", None) or mesh.weights or []
            for t, target in enumerate(prim.targets or []):
                if t < len(weights) and target.get("POSITION") is not None:
                    p = p + weights[t] * _accessor(gltf, target["POSITION"])
            p = np.c_[p, np.ones(len(p))]
            if node.skin is not None and prim.attributes.JOINTS_0 is not None:
                skin = gltf.skins[node.skin]
                ibm = _accessor(gltf, skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
                joints = np.stack([world[j] @ ibm[i] for i, j in enumerate(skin.joints)])
                j, w = _accessor(gltf, prim.attributes.JOINTS_0).astype(int), _accessor(gltf, prim.attributes.WEIGHTS_0)
                p = np.einsum("vij,vj->vi", np.einsum("vk,vkij->vij", w, joints[j]), p)  # skinned: world space
                placed = [p]
            else:
                placed = [(matrix @ q.T).T for q in _instances(gltf, node, p)]
            tri = _accessor(gltf, prim.indices).reshape(-1, 3).astype(int) if prim.indices is not None \
                else np.arange(len(p) - len(p) % 3).reshape(-1, 3)
            out += [(q[:, :3], tri) for q in placed]
    return out


def _instances(gltf, node, p: np.ndarray) -> list[np.ndarray]:
    ext = (node.extensions or {}).get("EXT_mesh_gpu_instancing")
    if not ext:
        return [p]
    attrs = ext["attributes"]
    t = _accessor(gltf, attrs["TRANSLATION"]) if "TRANSLATION" in attrs else None
    r = _accessor(gltf, attrs["ROTATION"]) if "ROTATION" in attrs else None
    s = _accessor(gltf, attrs["SCALE"]) if "SCALE" in attrs else None
    count = len(next(a for a in (t, r, s) if a is not None))
    out = []
    for i in range(count):
        node_like = pygltflib.Node(translation=list(t[i]) if t is not None else None,
                                   rotation=list(r[i]) if r is not None else None,
                                   scale=list(s[i]) if s is not None else None)
        out.append((_local(node_like) @ p.T).T)
    return out


def silhouette(parts, view_projection: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Pixel-centre coverage of the projected triangles (either winding)."""
    w, h = size
    mask = np.zeros((h, w), bool)
    for vertices, faces in parts:
        clip = np.c_[vertices, np.ones(len(vertices))] @ np.asarray(view_projection).T
        ndc = clip[:, :2] / clip[:, 3:4]
        px = np.c_[(ndc[:, 0] + 1) / 2 * w, (1 - ndc[:, 1]) / 2 * h]
        for a, b, c in px[faces]:
            x0, x1 = int(max(np.floor(min(a[0], b[0], c[0])), 0)), int(min(np.ceil(max(a[0], b[0], c[0])), w))
            y0, y1 = int(max(np.floor(min(a[1], b[1], c[1])), 0)), int(min(np.ceil(max(a[1], b[1], c[1])), h))
            if x0 >= x1 or y0 >= y1:
                continue
            xs, ys = np.meshgrid(np.arange(x0, x1) + 0.5, np.arange(y0, y1) + 0.5)
            e = [(q[0] - p[0]) * (ys - p[1]) - (q[1] - p[1]) * (xs - p[0]) for p, q in ((a, b), (b, c), (c, a))]
            mask[y0:y1, x0:x1] |= ((e[0] >= 0) & (e[1] >= 0) & (e[2] >= 0)) | ((e[0] <= 0) & (e[1] <= 0) & (e[2] <= 0))
    return mask


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / max((a | b).sum(), 1))
