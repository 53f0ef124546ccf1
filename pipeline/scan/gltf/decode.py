"""JSON bytes -> :class:`~pipeline.scan.gltf.structs.Document`, in one msgspec pass.

:func:`decode_document` returns None for anything the structs reject (bad JSON,
a wrong type, a value out of range); the reader then validates the same bytes with
the pydantic models, which locate the error.  The ``extensions`` objects of
materials and primitives arrive as plain dicts and become their extension structs
here, with the names of the extensions the structs do not model kept in ``others``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pipeline.scan.gltf import structs as S

_DECODER = msgspec.json.Decoder(S.Document)
DEPTH_SCREEN = 128  # below the models' JSON nesting limit (200)
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def decode_document(json_bytes: bytes) -> S.Document | None:
    """The document, or None when the structs reject it (the models then say why)."""
    if _maybe_deep(json_bytes):
        return None  # the models refuse nesting deeper than 200 wherever it is; msgspec skips it
    try:
        doc = _DECODER.decode(json_bytes)
        _finish(doc)
    except _ERRORS:
        return None
    return doc


def _maybe_deep(data: bytes) -> bool:
    """Whether arrays and objects may nest more than :data:`DEPTH_SCREEN` levels.

    Brackets inside strings are masked by quote parity; a file with an escaped quote
    is screened by its bracket count alone (conservative: a false "maybe" only costs
    the models' validation).
    """
    if data.count(b"[") + data.count(b"{") <= DEPTH_SCREEN:
        return False
    if b'\\"' in data:
        return True
    import numpy as np

    raw = np.frombuffer(data.translate(None, _NOT_STRUCTURE), dtype=np.uint8)
    outside = (np.cumsum(raw == 34) & 1) == 0  # not inside a string (a closing quote counts as inside)
    step = ((raw == 91) | (raw == 123)).astype(np.int16) - ((raw == 93) | (raw == 125))
    return int(np.cumsum(step * outside, dtype=np.int64).max()) > DEPTH_SCREEN


def from_python(value: Any) -> S.Document:
    """The document from already-parsed JSON (for what the models accept and the structs did not)."""
    doc = msgspec.convert(value, S.Document)
    _finish(doc)
    return doc


def _extensions(raw: dict[str, Any], cls: type[S.OpenExtensions]) -> S.OpenExtensions:
    known = {name: value for name, value in raw.items() if name in cls.__struct_fields__ and name != "others"}
    ext = msgspec.convert(known, cls)
    if len(known) < len(raw):
        ext = msgspec.structs.replace(ext, others=tuple(name for name in raw if name not in known))
    return ext


def _finish(doc: S.Document) -> None:
    materials = doc.materials
    for i, material in enumerate(materials):
        if material.extensions is not None:
            materials[i] = msgspec.structs.replace(
                material, extensions=_extensions(material.extensions, S.MaterialExtensions))
    for mesh in doc.meshes:
        for prim in mesh["primitives"]:
            ext = prim.get("extensions")
            if ext is not None:
                prim["extensions"] = _extensions(ext, S.PrimitiveExtensions)
