"""Buffer URIs, checked when a file is read so a bad one is a located error, not a surprise later.

A buffer's ``uri`` must be one of:

- absent (the BIN chunk of a .glb);
- a base64 ``data:`` URI (``data:<media type>;base64,<payload>``) of at most
  ``limits.max_data_uri_bytes`` characters whose payload is valid base64 and holds
  at least ``byteLength`` bytes;
- a relative file path (percent-encoded) that stays inside the world root: no
  scheme (``http:``, ``file:``, ``C:``), no leading ``/`` or ``\\``, no ``..`` that
  climbs above the root, no control characters.

Files are only opened later, when an optional fact needs them
(:mod:`pipeline.scan.buffers`, which also refuses symlinks leading out of the root).
"""

from __future__ import annotations

import binascii
import posixpath
import re
from urllib.parse import unquote

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.scan.gltf.limits import check_string
from pipeline.scan.gltf.structs import Document
from pipeline.scan.gltf.pointer import pointer

_DATA = re.compile(r"^data:", re.IGNORECASE)
_DATA_BASE64 = re.compile(r"^data:[^,]*?;base64,", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_buffer_uris(doc: Document, limits: Limits, file: str) -> None:
    """Raise GltfError at the first buffer whose URI is unusable or unsafe."""
    for i, buffer in enumerate(doc.buffers):
        if buffer.uri is None:
            continue
        at = pointer("buffers", i, "uri")
        if _DATA.match(buffer.uri):
            _check_data_uri(buffer.uri, buffer.byteLength, limits, file, at)
        else:
            check_string(buffer.uri, limits, file, at)
            _check_file_uri(buffer.uri, file, at)


def _check_data_uri(uri: str, byte_length: int, limits: Limits, file: str, at: str) -> None:
    if len(uri) > limits.max_data_uri_bytes:
        raise GltfError.at(file, f"data URI of {len(uri)} bytes, over the limit of {limits.max_data_uri_bytes} "
                                 "(limits.max_data_uri_bytes)", pointer=at)
    header = _DATA_BASE64.match(uri)
    if header is None:
        raise GltfError.at(file, "data URI is not base64-encoded (expected 'data:<type>;base64,...')", pointer=at)
    payload = uri[header.end():]
    try:
        size = len(binascii.a2b_base64(payload, strict_mode=True))
    except (binascii.Error, ValueError):
        raise GltfError.at(file, "data URI is not valid base64", pointer=at) from None
    if size < byte_length:
        raise GltfError.at(file, f"data URI holds {size} bytes, fewer than the buffer's byteLength {byte_length}",
                           pointer=at)


def _check_file_uri(uri: str, file: str, at: str) -> None:
    path = unquote(uri)
    if _CONTROL.search(path):
        raise GltfError.at(file, "buffer URI contains control characters", pointer=at)
    if _SCHEME.match(path) or path.startswith(("/", "\\")):
        raise GltfError.at(file, f"buffer URI {_short(uri)} is not a relative file path", pointer=at)
    folder = posixpath.dirname(file) if not posixpath.isabs(file) else ""
    joined = posixpath.normpath(posixpath.join(folder, path.replace("\\", "/")))
    if joined == ".." or joined.startswith("../"):
        raise GltfError.at(file, f"buffer URI {_short(uri)} points outside the world root", pointer=at)


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
