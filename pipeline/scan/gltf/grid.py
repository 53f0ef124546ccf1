"""Grid chunking: a level that is one large scene is split into square cells.

A draw's cell is the one holding the center of its node instance's world-space
bounds (the POSITION accessors' ``min``/``max`` of the node's mesh, transformed
by the node's world matrix; the node's world origin when no bounds are given).
Cells are named ``<level>/x<i>_z<j>`` with ``i = floor(x / grid)`` and
``j = floor(z / grid)`` (glTF is Y-up, so X and Z span the ground plane).
GPU instancing transforms are not expanded: the node's own bounds decide.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pipeline.errors import GltfError
from pipeline.scan.gltf.draws import ChunkOf, Instance
from pipeline.scan.gltf.reader import Gltf
from pipeline.scan.gltf.transforms import world_bounds, world_matrices

if TYPE_CHECKING:  # imported on first use, see transforms.py
    import numpy as np


def cell_name(level: str, center, grid: float) -> str:
    return f"{level}/x{math.floor(center[0] / grid)}_z{math.floor(center[2] / grid)}"


def grid_chunk_of(gltf: Gltf, level: str, grid: float) -> ChunkOf:
    """A ChunkOf mapping each node instance to its grid cell."""
    import numpy as np

    worlds = world_matrices(gltf.doc)

    def chunk_of(inst: Instance) -> tuple[str, str]:
        center = node_center(gltf, inst.node, worlds[inst.node])
        if not np.all(np.isfinite(center)):
            raise GltfError.at(gltf.file, "world-space position is not finite; cannot place the node in a grid cell",
                               pointer=f"/nodes/{inst.node}")
        return cell_name(level, center, grid), level

    return chunk_of


def node_center(gltf: Gltf, n: int, world: np.ndarray) -> np.ndarray:
    """Center of the node's world-space bounds (its world origin when unknown)."""
    box = _local_box(gltf, n)
    if box is None:
        return world[:3, 3]
    lo, hi = world_bounds(world, *box)
    return (lo + hi) / 2


def _local_box(gltf: Gltf, n: int):
    mesh = gltf.doc.nodes[n].get("mesh")
    if mesh is None:
        return None
    accessors = gltf.data().accessors
    lows, highs = [], []
    for prim in gltf.doc.meshes[mesh]["primitives"]:
        position = prim["attributes"].get("POSITION")
        acc = accessors[position] if position is not None and position < len(accessors) else {}
        if len(acc.get("min", ())) == 3 and len(acc.get("max", ())) == 3:
            lows.append(acc["min"]), highs.append(acc["max"])
    if not lows:
        return None
    import numpy as np

    return np.min(lows, axis=0), np.max(highs, axis=0)
