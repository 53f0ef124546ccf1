"""Reading one glTF file into a validated :class:`Gltf`: container, JSON, models, limits, refs.

Every problem with the input raises :class:`~pipeline.errors.GltfError` with one
located diagnostic (``file: /json/pointer: error: message``, or ``file:LINE:COL``
for JSON syntax errors); nothing about bad data escapes as another exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.fileio import read_regular
from pipeline.scan.gltf.accessors import check_accessors
from pipeline.scan.gltf.bufferdoc import BufferDocument
from pipeline.scan.gltf.container import Container, split_container
from pipeline.scan.gltf.extensions import is_understood
from pipeline.scan.gltf.limits import check_document, check_file_size, check_value
from pipeline.scan.gltf.models import Document
from pipeline.scan.gltf.pointer import pointer
from pipeline.scan.gltf.refs import check_refs
from pipeline.scan.gltf.uris import check_buffer_uris

_VERSION = re.compile(r"^2\.[0-9]+$")
_JSON_POS = re.compile(r"^Invalid JSON: (.*) at line (\d+) column (\d+)$")


@dataclass
class Gltf:
    """A validated document plus what is needed to reach its binary data later."""

    file: str
    path: Path
    container: Container
    doc: Document
    _data: BufferDocument | None = None

    def data(self) -> BufferDocument:
        """Accessor, bufferView and buffer details (parsed on first use)."""
        if self._data is None:
            self._data = validate(BufferDocument, self.container.json, self.file)
        return self._data


def read_bytes(path: Path, file: str, limits: Limits) -> bytes:
    """The file's content, refusing what is not a regular file or is over ``limits.max_file_bytes``.

    Opened non-blocking, so a FIFO or device named ``x.gltf`` is refused instead of hanging.
    """
    return read_regular(path, file, limit=limits.max_file_bytes, error=GltfError,
                        limit_name="limits.max_file_bytes")


def parse_gltf(data: bytes, path: Path, file: str, limits: Limits) -> Gltf:
    """Validate file content; raises GltfError located in the file."""
    check_file_size(len(data), limits, file)
    container = split_container(data, file)
    doc = validate(Document, container.json, file)
    check_version(doc, file)
    check_required_extensions(doc, file)
    check_document(doc, limits, file)
    check_buffer_uris(doc, limits, file)
    check_refs(doc, file)
    check_accessors(doc, file)
    for m, material in enumerate(doc.materials):
        if material.extras is not None:
            check_value(material.extras, limits, file, pointer("materials", m, "extras"))
    return Gltf(file, path, container, doc)


def validate(model, json_bytes: bytes, file: str):
    """``model.model_validate_json`` with errors turned into one located GltfError."""
    try:
        return model.model_validate_json(json_bytes)
    except ValidationError as exc:
        raise _not_utf8(exc, json_bytes, file) or _located(exc, file) from None


def _not_utf8(exc: ValidationError, json_bytes: bytes, file: str) -> GltfError | None:
    """Invalid UTF-8, located at the first bad byte (line, byte column) by us: JSON parser
    versions disagree by one column on where a bad code point is."""
    if "unicode" not in str(exc.errors(include_url=False, include_input=False)[0]["msg"]):
        return None
    try:
        json_bytes.decode("utf-8")
    except UnicodeDecodeError as bad:
        line_start = json_bytes.rfind(b"\n", 0, bad.start) + 1
        return GltfError.at(file, "invalid JSON: invalid unicode code point",
                            line=json_bytes.count(b"\n", 0, bad.start) + 1, col=bad.start - line_start + 1)
    return None


def _located(exc: ValidationError, file: str) -> GltfError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    if first["type"] == "json_invalid":
        match = _JSON_POS.match(first["msg"])
        if match:
            return GltfError.at(file, f"invalid JSON: {match.group(1)}",
                                line=int(match.group(2)), col=max(1, int(match.group(3))))
        return GltfError.at(file, first["msg"].replace("Invalid JSON", "invalid JSON"))
    message = _message(first)
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return GltfError.at(file, message, pointer=pointer(*first["loc"]))


def _message(error: dict) -> str:
    msg = error["msg"]
    if error["type"] == "missing":
        return "required property is missing"
    if error["type"] == "union_tag_invalid":
        return msg
    return msg[0].lower() + msg[1:]


def check_version(doc: Document, file: str) -> None:
    if not _VERSION.match(doc.asset.version):
        raise GltfError.at(file, f"unsupported glTF version {doc.asset.version!r} (expected 2.x)",
                           pointer=pointer("asset", "version"))
    if doc.asset.minVersion is not None and not _VERSION.match(doc.asset.minVersion):
        raise GltfError.at(file, f"unsupported glTF minVersion {doc.asset.minVersion!r} (expected 2.x)",
                           pointer=pointer("asset", "minVersion"))


def check_required_extensions(doc: Document, file: str) -> None:
    for i, name in enumerate(doc.extensionsRequired):
        if not is_understood(name):
            raise GltfError.at(file, f"required extension {name!r} is not supported",
                               pointer=pointer("extensionsRequired", i))


def read_gltf(path: Path, file: str, limits: Limits) -> Gltf:
    """Read and validate one .gltf/.glb file."""
    return parse_gltf(read_bytes(path, file, limits), path, file, limits)
