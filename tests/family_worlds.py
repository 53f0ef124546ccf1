"""A one-chunk world of triangles for a test shader family: one mesh per material, with or without
TEXCOORD_0 and COLOR_0, and a pipeline.toml naming the family's rules and materials folders."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

FLOAT = 5126
COLUMNS = {  # attribute -> (accessor type, values of the three vertices, extra accessor fields)
    "POSITION": ("VEC3", [0, 0, 0, 1, 0, 0, 0, 1, 0], {"min": [0, 0, 0], "max": [1, 1, 0]}),
    "NORMAL": ("VEC3", [0, 0, 1] * 3, {}),
    "TEXCOORD_0": ("VEC2", [0, 0, 1, 0, 0, 1], {}),
    "COLOR_0": ("VEC4", [1, 0.5, 0.5, 1] * 3, {}),
}


def triangle_world(path: Path, rules: Path, materials_root: Path, materials: list[tuple[dict, tuple[str, ...]]],
                   toml: str = "") -> Path:
    """``materials``: (glTF material, extra attributes of its mesh besides POSITION and NORMAL)."""
    write_triangles(path / "level" / "props", materials)
    (path / "pipeline.toml").write_text(f'rules = "{rules}"\nmaterials = "{materials_root}"\n{toml}')
    return path


def write_triangles(chunk: Path, materials: list[tuple[dict, tuple[str, ...]]]) -> None:
    """``chunk``/things.gltf: one triangle mesh per material (with its extra attributes), one buffer."""
    data, views, accessors = b"", [], []
    for kind, values, extra in COLUMNS.values():
        views.append({"buffer": 0, "byteOffset": len(data), "byteLength": 4 * len(values)})
        accessors.append({"bufferView": len(views) - 1, "componentType": FLOAT, "count": 3, "type": kind, **extra})
        data += struct.pack(f"<{len(values)}f", *values)
    index = {name: i for i, name in enumerate(COLUMNS)}
    meshes = [{"primitives": [{"attributes": {a: index[a] for a in ("POSITION", "NORMAL", *extra)}, "material": i}]}
              for i, (_, extra) in enumerate(materials)]
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": list(range(len(meshes)))}],
        "nodes": [{"mesh": i} for i in range(len(meshes))], "meshes": meshes,
        "materials": [m for m, _ in materials], "textures": [{"source": 0}], "images": [{"uri": "albedo.png"}],
        "buffers": [{"byteLength": len(data),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode()}],
        "bufferViews": views, "accessors": accessors,
    }
    chunk.mkdir(parents=True)
    (chunk / "things.gltf").write_text(json.dumps(doc, indent=1))
