"""Accessor formats: combinations of ``componentType`` and ``normalized`` that glTF 2.0 does not have.

``type`` and ``componentType`` themselves are closed sets in the structs
(:mod:`pipeline.scan.gltf.structs`).  What is left is ``normalized``, which only exists
for 8- and 16-bit integer components (never FLOAT or UNSIGNED_INT).  Which types
and formats a vertex attribute uses are facts (``mesh.attributes.*``), reported as
authored, not judged here.
"""

from __future__ import annotations

from pipeline.errors import GltfError
from pipeline.scan.gltf.structs import Document
from pipeline.scan.gltf.pointer import pointer

BYTE, UBYTE, SHORT, USHORT, UINT, FLOAT = 5120, 5121, 5122, 5123, 5125, 5126
NAMES = {BYTE: "BYTE", UBYTE: "UNSIGNED_BYTE", SHORT: "SHORT", USHORT: "UNSIGNED_SHORT",
         UINT: "UNSIGNED_INT", FLOAT: "FLOAT"}
NORMALIZABLE = frozenset({BYTE, UBYTE, SHORT, USHORT})


def check_accessors(doc: Document, file: str) -> None:
    """Raise GltfError at the first accessor with a format glTF does not define."""
    for a, accessor in enumerate(doc.accessors):
        if accessor.get("normalized", False) and accessor["componentType"] not in NORMALIZABLE:
            raise GltfError.at(file, f"normalized is only defined for 8- and 16-bit integer components, "
                                     f"not {NAMES[accessor['componentType']]}",
                               pointer=pointer("accessors", a, "normalized"))
