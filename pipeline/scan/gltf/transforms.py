"""Node transforms: handedness of a local transform (pure Python) and world matrices (numpy).

glTF matrices are column-major 4x4; TRS is ``T * R * S`` with a unit quaternion
``(x, y, z, w)``.  A rotation has determinant +1, so the sign of a TRS
determinant is the sign of ``sx * sy * sz``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.scan.gltf.structs import Document

if TYPE_CHECKING:  # numpy is imported on first use (grid levels only): it is slow to import
    import numpy as np


def local_det_sign(node: dict) -> int:
    """-1, 0 or +1: the sign of the determinant of the node's local 3x3 transform."""
    matrix = node.get("matrix")
    if matrix is not None:
        det = _det3(matrix)
    else:
        sx, sy, sz = node.get("scale", (1.0, 1.0, 1.0))
        det = sx * sy * sz
    return (det > 0) - (det < 0)


def _det3(m) -> float:
    """Determinant of the upper-left 3x3 of a column-major 4x4 given as 16 numbers."""
    a, b, c = m[0], m[4], m[8]
    d, e, f = m[1], m[5], m[9]
    g, h, i = m[2], m[6], m[10]
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def local_matrix(node: dict) -> np.ndarray:
    """The node's local 4x4 matrix (row-major numpy array)."""
    import numpy as np

    if "matrix" in node:
        return np.array(node["matrix"], dtype=float).reshape(4, 4).T
    t = node.get("translation", (0.0, 0.0, 0.0))
    x, y, z, w = node.get("rotation", (0.0, 0.0, 0.0, 1.0))
    s = node.get("scale", (1.0, 1.0, 1.0))
    rotation = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    out = np.eye(4)
    out[:3, :3] = rotation * np.asarray(s, dtype=float)
    out[:3, 3] = t
    return out


def world_matrices(doc: Document) -> dict[int, np.ndarray]:
    """World matrix of every node reachable from a scene (first scene wins)."""
    import numpy as np

    out: dict[int, np.ndarray] = {}
    for scene in doc.scenes:
        stack = [(root, np.eye(4)) for root in scene.nodes]
        while stack:
            n, parent = stack.pop()
            node = doc.nodes[n]
            world = parent @ local_matrix(node)
            out.setdefault(n, world)
            stack.extend((c, world) for c in node.get("children", ()))
    return out


def world_bounds(matrix: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned world bounds of a local box (min/max corners) under a matrix."""
    import numpy as np

    corners = np.array([[x, y, z, 1.0] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    world = corners @ matrix.T
    return world[:, :3].min(axis=0), world[:, :3].max(axis=0)
