"""Reader limits (``[limits]`` in pipeline.toml), checked so bad input is an error, not a hang.

What each limit covers:

- ``max_file_bytes``: a .gltf/.glb larger than this is not read at all.
- ``max_json_depth``: nesting of every free-form value the scanner keeps
  (``extras``).  The rest of the document has a fixed shape; the JSON parser
  itself refuses nesting deeper than a few hundred levels.
- ``max_elements``: entries of each top-level array (``accessors``, ``nodes`` ...).
- ``max_data_uri_bytes``: length of a buffer's ``data:`` URI.
- ``max_string_length``: any other string kept (variant and extension names,
  buffer file URIs, strings inside ``extras``).

Integers inside ``extras`` must fit in 64 bits (the canonical serializer behind
every signature and key cannot write larger ones); indices and counts elsewhere
are bounded by the structs (:data:`pipeline.scan.gltf.structs.UINT32_MAX`).
"""

from __future__ import annotations

from typing import Any

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.scan.gltf.structs import TOP_LEVEL_ARRAYS, Document
from pipeline.scan.gltf.pointer import pointer

INT_MIN, UINT64_MAX = -(2**63), 2**64 - 1


def check_file_size(size: int, limits: Limits, file: str) -> None:
    if size > limits.max_file_bytes:
        raise GltfError.at(file, f"file is {size} bytes, over the limit of {limits.max_file_bytes} (limits.max_file_bytes)")


def check_document(doc: Document, limits: Limits, file: str) -> None:
    """Top-level array sizes and the strings the scanner keeps."""
    for name in TOP_LEVEL_ARRAYS:
        count = len(getattr(doc, name))
        if count > limits.max_elements:
            raise GltfError.at(file, f"{count} entries, over the limit of {limits.max_elements} (limits.max_elements)",
                               pointer=pointer(name))
    longest = limits.max_string_length
    for name in ("extensionsUsed", "extensionsRequired"):
        for i, text in enumerate(getattr(doc, name)):
            if len(text) > longest:  # the pointer is only built for the error
                check_string(text, limits, file, pointer(name, i))
    variants = doc.extensions.KHR_materials_variants if doc.extensions else None
    for i, variant in enumerate(variants.variants if variants else ()):
        if len(variant.name) > longest:
            check_string(variant.name, limits, file,
                         pointer("extensions", "KHR_materials_variants", "variants", i, "name"))


def check_string(text: str, limits: Limits, file: str, at: str) -> None:
    if len(text) > limits.max_string_length:
        raise GltfError.at(file, f"string of {len(text)} characters, over the limit of {limits.max_string_length} "
                                 "(limits.max_string_length)", pointer=at)


def check_value(value: Any, limits: Limits, file: str, at: str) -> None:
    """Depth, string lengths and element counts of a free-form JSON value (iterative)."""
    stack = [(value, at, 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            check_string(item, limits, file, where)
            continue
        if isinstance(item, int) and not INT_MIN <= item <= UINT64_MAX:
            raise GltfError.at(file, "integer does not fit in 64 bits", pointer=where)
        if not isinstance(item, (dict, list)):
            continue
        if depth > limits.max_json_depth:
            raise GltfError.at(file, f"nested deeper than {limits.max_json_depth} levels (limits.max_json_depth)",
                               pointer=at)
        if len(item) > limits.max_elements:
            raise GltfError.at(file, f"{len(item)} entries, over the limit of {limits.max_elements} "
                                     "(limits.max_elements)", pointer=where)
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in pairs:
            if isinstance(key, str):
                check_string(key, limits, file, where)
            stack.append((child, where + pointer(key), depth + 1))
