"""Optional facts that need buffer data, computed only when a rule reads them.

Supported fact paths (:data:`OPTIONAL_FACTS`):

- ``mesh.colorAllWhite``: COLOR_0 is present and every component is 1.0
  (within 1/512, so 8-bit 255 counts); ``False`` when COLOR_0 is absent.
- ``mesh.maxJointInfluences``: the largest number of non-zero weights over the
  WEIGHTS_n sets on any vertex; ``0`` without WEIGHTS_0.

Either is ``None`` (unknown) when the data cannot be read: an external .bin is
missing, the primitive is Draco or meshopt compressed, the accessor is sparse or
has no bufferView, a view is out of bounds.

Where buffer bytes come from: the GLB BIN chunk (buffer 0 without ``uri`` in a
.glb), a base64 ``data:`` URI, or a file next to the glTF (percent-decoded URI).
A URI that resolves outside the world root (``../../etc/passwd``, an absolute
path) or names another scheme (``http:``, ``file:``) is never read: the reader
(:mod:`pipeline.scan.gltf.uris`) already rejects such a file with a located error.  What
can still reach this module is a symlink leading out of the root, an oversized
``data:`` URI or external file: the fact is ``None`` and the file gets a located
warning.
"""

from __future__ import annotations

import importlib

import base64
import binascii
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from pipeline.config import Limits
from pipeline.errors import Diagnostic, Location
from pipeline.fileio import FileReadError, read_regular
from pipeline.scan.gltf.pointer import pointer
from pipeline.scan.gltf.reader import Gltf

if TYPE_CHECKING:  # numpy is imported on first use: most scans never read a buffer
    import numpy as np

OPTIONAL_FACTS = frozenset({"mesh.colorAllWhite", "mesh.maxJointInfluences"})
WHITE_TOLERANCE = 1 / 512

_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
_DTYPES = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_DATA_URI = re.compile(r"^data:[^,]*?;base64,", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_COMPRESSED_VIEW = ("EXT_meshopt_compression", "KHR_meshopt_compression")


class BufferData:
    """Lazy access to the binary data of one glTF file (each buffer loaded at most once)."""

    def __init__(self, gltf: Gltf, root: Path, limits: Limits):
        self.gltf, self._root, self.limits = gltf, root, limits
        self._resolved_root: Path | None = None
        self.warnings: list[Diagnostic] = []
        self._buffers: dict[int, memoryview | None] = {}
        self.dependencies: list[Path] = []

    @property
    def root(self) -> Path:
        """The world root, resolved on first use (most files never read an external buffer)."""
        if self._resolved_root is None:
            self._resolved_root = Path(self._root).resolve()
        return self._resolved_root

    # ------------------------------------------------------------ buffers
    def buffer(self, index: int) -> memoryview | None:
        if index not in self._buffers:
            self._buffers[index] = self._load(index)
        return self._buffers[index]

    def _load(self, index: int) -> memoryview | None:
        buffers = self.gltf.data().buffers
        if index >= len(buffers):
            return None
        uri = buffers[index].get("uri")
        if uri is None:
            binary = self.gltf.container.bin if index == 0 else None
            return binary if binary is not None and len(binary) >= buffers[index]["byteLength"] else None
        data = self._from_uri(uri, index)
        return memoryview(data) if data is not None and len(data) >= buffers[index]["byteLength"] else None

    def _from_uri(self, uri: str, index: int) -> bytes | None:
        at = pointer("buffers", index, "uri")
        if _DATA_URI.match(uri):
            if len(uri) > self.limits.max_data_uri_bytes:
                return self._warn(at, "data URI over limits.max_data_uri_bytes; buffer not read")
            try:
                return base64.b64decode(uri[uri.index(",") + 1:], validate=True)
            except (binascii.Error, ValueError):
                return self._warn(at, "data URI is not valid base64; buffer not read")
        if _SCHEME.match(uri) or uri.startswith(("/", "\\")):
            return self._warn(at, "buffer URI is not a relative file path; not read")
        return self._from_file(unquote(uri), at)

    def _from_file(self, relative: str, at: str) -> bytes | None:
        path = (self.gltf.path.parent / relative).resolve()
        if not path.is_relative_to(self.root):
            return self._warn(at, "buffer URI points outside the world root; not read")
        if not os.path.lexists(path):
            return None  # a missing .bin is normal: the facts stay unknown
        try:
            data = read_regular(path, limit=self.limits.max_file_bytes, limit_name="limits.max_file_bytes")
        except FileReadError as exc:
            return self._warn(at, f"buffer file not read: {exc.diagnostics[0].message}")
        self.dependencies.append(path)
        return data

    def _warn(self, at: str, message: str) -> None:
        self.warnings.append(Diagnostic(Location(self.gltf.file, pointer=at), message, "warning"))
        return None

    # ------------------------------------------------------------ accessors
    def accessor(self, index: int) -> np.ndarray | None:
        """Accessor values as float64, shape (count, components); normalized ints scaled to [0,1]/[-1,1]."""
        import numpy as np

        acc = self.gltf.data().accessors[index]
        components = _COMPONENTS.get(acc["type"])
        if components is None or "sparse" in acc or "bufferView" not in acc:
            return None
        raw = self._view_array(acc, components)
        if raw is None:
            return None
        values = raw.astype(np.float64)
        if acc.get("normalized", False) and raw.dtype.kind in "iu":
            values = np.maximum(values / np.iinfo(raw.dtype).max, -1.0)
        return values

    def _view_array(self, acc: dict, components: int) -> np.ndarray | None:
        import numpy as np

        views = self.gltf.data().bufferViews
        if acc["bufferView"] >= len(views):
            return None
        view = views[acc["bufferView"]]
        if any(name in view.get("extensions", {}) for name in _COMPRESSED_VIEW):
            return None
        data = self.buffer(view["buffer"])
        if data is None:
            return None
        dtype = np.dtype(_DTYPES[acc["componentType"]])
        element = dtype.itemsize * components
        stride = view.get("byteStride") or element
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        end = view.get("byteOffset", 0) + view["byteLength"]
        if end > len(data) or start + stride * (acc["count"] - 1) + element > end:
            return None
        return np.ndarray((acc["count"], components), dtype, buffer=data, offset=start,
                          strides=(stride, dtype.itemsize))


# ---------------------------------------------------------------- facts
def preload(wanted: frozenset[str]) -> None:
    """Import what reading ``wanted`` facts needs now: before a pool forks, so each worker does not."""
    if wanted & OPTIONAL_FACTS:
        importlib.import_module("numpy")


def primitive_facts(data: BufferData, mesh: int, primitive: int, wanted: frozenset[str]) -> dict:
    """The requested optional mesh facts of one primitive (field name -> value or None)."""
    prim = data.gltf.doc.meshes[mesh]["primitives"][primitive]
    ext = prim.get("extensions")
    compressed = ext is not None and "KHR_draco_mesh_compression" in ext.names()
    out = {}
    if "mesh.colorAllWhite" in wanted:
        out["colorAllWhite"] = None if compressed else color_all_white(data, prim["attributes"])
    if "mesh.maxJointInfluences" in wanted:
        out["maxJointInfluences"] = None if compressed else max_joint_influences(data, prim["attributes"])
    return out


def color_all_white(data: BufferData, attributes: dict[str, int]) -> bool | None:
    if "COLOR_0" not in attributes:
        return False
    import numpy as np

    values = data.accessor(attributes["COLOR_0"])
    return None if values is None else bool(np.all(np.abs(values - 1.0) <= WHITE_TOLERANCE))


def max_joint_influences(data: BufferData, attributes: dict[str, int]) -> int | None:
    sets = sorted(n for n in attributes if n.startswith("WEIGHTS_") and n[8:].isdigit())
    if not sets:
        return 0
    arrays = [data.accessor(attributes[name]) for name in sets]
    if any(a is None for a in arrays) or len({len(a) for a in arrays}) != 1:
        return None
    import numpy as np

    return int((np.concatenate(arrays, axis=1) > 0).sum(axis=1).max())
