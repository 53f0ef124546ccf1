"""JSON bytes -> :class:`~pipeline.scan.gltf.structs.Document`, in one msgspec pass.

:func:`decode_document` returns None for anything the structs reject (bad JSON,
a wrong type, a value out of range); the reader then walks the parsed JSON against
the same structs (:mod:`pipeline.scan.gltf.located`), which locates the error.  The ``extensions`` objects of
materials and primitives arrive as plain dicts and become their extension structs
here, with the names of the extensions the structs do not model kept in ``others``.

JSON nested 200 to about 1,000 levels deep inside a property the scanner ignores
(``animations``, ``extras`` of a node ...) is skipped here; in a file the structs
reject, or nested deeper, it is the located error ("recursion limit exceeded").  ``extras`` of materials, the one
free-form value kept, is limited by ``limits.max_json_depth``.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from pipeline.scan.gltf import structs as S

_DECODER = msgspec.json.Decoder(S.Document)
_BUFFERS = msgspec.json.Decoder(S.BufferDocument)
_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def decode_document(json_bytes: bytes) -> S.Document | None:
    """The document, or None when the structs reject it (:mod:`pipeline.scan.gltf.located` then says why)."""
    try:
        doc = _DECODER.decode(json_bytes)
        _finish(doc)
    except _ERRORS:
        return None
    return doc


def decode_buffers(json_bytes: bytes) -> S.BufferDocument | None:
    """The buffer locations, or None when the structs reject them (:mod:`pipeline.scan.gltf.located` then says why)."""
    try:
        return _BUFFERS.decode(json_bytes)
    except _ERRORS:
        return None


def from_python(value: Any) -> S.Document:
    """The document from already-parsed JSON: what the walk accepts and msgspec's JSON decoder did not
    (a ``NaN`` or ``Infinity`` literal in a property the structs ignore)."""
    doc = msgspec.convert(value, S.Document)
    _finish(doc)
    return doc


_SEEN: dict[bytes, S.MaterialExtensions] = {}  # exact JSON of a material's raw extensions -> their struct
_SEEN_MAX = 4096


def _material_extensions(raw: dict[str, Any]) -> S.MaterialExtensions:
    """A material's ``extensions`` struct; equal blocks (files repeat their materials) are converted once.

    Keyed by the block's exact JSON (member order, ``1`` vs ``1.0``, ``-0.0`` all kept); these structs
    are frozen and hold no list or dict, so one may serve many files."""
    try:
        key = orjson.dumps(raw)
    except (orjson.JSONEncodeError, TypeError):  # an integer beyond 64 bits, a lone surrogate: not kept
        return _extensions(raw, S.MaterialExtensions)
    found = _SEEN.get(key)
    if found is None:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        found = _SEEN[key] = _extensions(raw, S.MaterialExtensions)
    return found


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
            materials[i] = msgspec.structs.replace(material, extensions=_material_extensions(material.extensions))
    for mesh in doc.meshes:
        for prim in mesh["primitives"]:
            ext = prim.get("extensions")
            if ext is not None:
                prim["extensions"] = _extensions(ext, S.RAW_EXTENSIONS[S.Primitive])
