"""Reading one glTF file into a validated :class:`Gltf`: container, JSON, structs, limits, refs.

Every problem with the input raises :class:`~pipeline.errors.GltfError` with one
located diagnostic (``file: /json/pointer: error: message``, or ``file:LINE:COL``
for JSON syntax errors); nothing about bad data escapes as another exception.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.fileio import read_regular
from pipeline.scan.gltf.accessors import check_accessors
from pipeline.scan.gltf.container import Container, split_container
from pipeline.scan.gltf.extensions import is_understood
from pipeline.scan.gltf.limits import check_document, check_file_size, check_value
from pipeline.scan.gltf.decode import decode_buffers, decode_document, from_python
from pipeline.scan.gltf.structs import BufferDocument, Document
from pipeline.scan.gltf.pointer import pointer
from pipeline.scan.gltf.refs import check_refs
from pipeline.scan.gltf.uris import check_buffer_uris

_VERSION = re.compile(r"^2\.[0-9]+$")


class Gltf(msgspec.Struct):
    """A validated document plus what is needed to reach its binary data later."""

    file: str
    path: Path
    container: Container
    doc: Document
    _data: BufferDocument | None = None

    def data(self) -> BufferDocument:
        """Accessor, bufferView and buffer details (parsed on first use)."""
        if self._data is None:
            self._data = decode_buffers(self.container.json)
        if self._data is None:  # the structs rejected it: the located error (or the value, when they accept it)
            from pipeline.scan.gltf.located import locate

            self._data = msgspec.convert(locate(BufferDocument, self.container.json, self.file), BufferDocument)
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
    doc = decode(container.json, file)
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


def decode(json_bytes: bytes, file: str) -> Document:
    """The document as structs; what msgspec rejects is walked against the same structs
    for the located error (or, when the walk finds none, converted from the parsed value).

    msgspec takes invalid UTF-8 inside a string it skips as it is, so text the parsers accept
    that is not all ASCII is checked: its first bad byte is the error (line, byte column)."""
    doc = decode_document(json_bytes)
    if doc is None:
        from pipeline.scan.gltf.located import locate

        value = locate(Document, json_bytes, file)
        _check_utf8(json_bytes, file)
        return from_python(value)
    _check_utf8(json_bytes, file)
    return doc


def _check_utf8(json_bytes: bytes, file: str) -> None:
    if not json_bytes.isascii():
        from pipeline.scan.gltf.located import utf8_error

        bad = utf8_error(json_bytes, file)
        if bad is not None:
            raise bad


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
