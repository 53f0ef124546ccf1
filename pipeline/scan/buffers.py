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
import struct
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
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
# componentType -> (struct format code, bytes): little-endian, "<" + code is also the numpy dtype
_STRUCT = {5120: ("b", 1), 5121: ("B", 1), 5122: ("h", 2), 5123: ("H", 2), 5125: ("I", 4), 5126: ("f", 4)}
SMALL_ACCESSOR = 64  # accessors of at most this many values are read without numpy (cheaper for so few)
_UNSET = object()
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
        self._memo: dict[tuple, Any] = {}

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

    def memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per ``key`` for this file (primitives often share their accessors)."""
        found = self._memo.get(key, _UNSET)
        if found is _UNSET:
            found = self._memo[key] = compute()
        return found

    # ------------------------------------------------------------ accessors
    def small_accessor(self, index: int) -> list[tuple[float, ...]] | Literal[False] | None:
        """:meth:`accessor` as rows of Python floats (the same values), for accessors of at most
        :data:`SMALL_ACCESSOR` values, read without numpy; False when :meth:`accessor` gives None,
        None when the accessor is larger (or of a kind only :meth:`accessor` reads)."""
        acc = self.gltf.data().accessors[index]
        components = _COMPONENTS.get(acc["type"])
        if components is None or "sparse" in acc or "bufferView" not in acc:
            return False
        if components * acc["count"] > SMALL_ACCESSOR:
            return None
        found = self._view_layout(acc, components)
        if found is None:
            return False
        data, start, stride, code, size = found
        unpack = struct.Struct("<" + code * components).unpack_from
        rows = [unpack(data, start + stride * i) for i in range(acc["count"])]
        if code == "f" or not acc.get("normalized", False):
            return [tuple(map(float, row)) for row in rows] if code != "f" else rows
        top = (1 << (8 * size - (code.islower()))) - 1  # np.iinfo(dtype).max
        return [tuple(max(v / top, -1.0) for v in row) for row in rows]

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

        found = self._view_layout(acc, components)
        if found is None:
            return None
        data, start, stride, code, size = found
        dtype = np.dtype("<" + code)
        return np.ndarray((acc["count"], components), dtype, buffer=data, offset=start, strides=(stride, size))

    def _view_layout(self, acc: dict, components: int) -> tuple[memoryview, int, int, str, int] | None:
        """Where an accessor's elements are: (buffer, first byte, stride, struct code, component size),
        or None when they cannot be read (compressed view, missing buffer, out of bounds)."""
        views = self.gltf.data().bufferViews
        if acc["bufferView"] >= len(views):
            return None
        view = views[acc["bufferView"]]
        if any(name in view.get("extensions", {}) for name in _COMPRESSED_VIEW):
            return None
        data = self.buffer(view["buffer"])
        if data is None:
            return None
        code, size = _STRUCT[acc["componentType"]]
        element = size * components
        stride = view.get("byteStride") or element
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        end = view.get("byteOffset", 0) + view["byteLength"]
        if end > len(data) or start + stride * (acc["count"] - 1) + element > end:
            return None
        return data, start, stride, code, size


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
    return data.memo(("white", attributes["COLOR_0"]), lambda: _all_white(data, attributes["COLOR_0"]))


def _all_white(data: BufferData, index: int) -> bool | None:
    values = data.small_accessor(index)
    if values is not None:
        return None if values is False else all(abs(v - 1.0) <= WHITE_TOLERANCE for row in values for v in row)
    import numpy as np

    values = data.accessor(index)
    return None if values is None else bool(np.all(np.abs(values - 1.0) <= WHITE_TOLERANCE))


def max_joint_influences(data: BufferData, attributes: dict[str, int]) -> int | None:
    sets = sorted(n for n in attributes if n.startswith("WEIGHTS_") and n[8:].isdigit())
    if not sets:
        return 0
    indices = tuple(attributes[name] for name in sets)
    return data.memo(("joints", indices), lambda: _max_influences(data, indices))


def _max_influences(data: BufferData, indices: tuple[int, ...]) -> int | None:
    small = [data.small_accessor(i) for i in indices]
    if all(rows is not None for rows in small):
        if any(rows is False for rows in small) or len({len(rows) for rows in small}) != 1:
            return None
        return max(sum(v > 0 for rows in small for v in rows[i]) for i in range(len(small[0])))
    arrays = [data.accessor(i) for i in indices]
    if any(a is None for a in arrays) or len({len(a) for a in arrays}) != 1:
        return None
    import numpy as np

    return int((np.concatenate(arrays, axis=1) > 0).sum(axis=1).max())
