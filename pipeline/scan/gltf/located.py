"""Located errors from the pydantic models: what a file the structs rejected is validated with.

The first error pydantic finds becomes one :class:`~pipeline.errors.GltfError`:
``file: /json/pointer: error: message`` (with "(and N more)"), or ``file:LINE:COL`` for
JSON syntax, or the first invalid UTF-8 byte.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from pipeline.errors import GltfError
from pipeline.scan.gltf.pointer import pointer

_JSON_POS = re.compile(r"^Invalid JSON: (.*) at line (\d+) column (\d+)$")


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
    return utf8_error(json_bytes, file)


def utf8_error(json_bytes: bytes, file: str) -> GltfError | None:
    """The located error of the first byte of ``json_bytes`` that is not UTF-8, or None when all are."""
    try:
        json_bytes.decode("utf-8")
    except UnicodeDecodeError as bad:
        line_start = json_bytes.rfind(b"\n", 0, bad.start) + 1
        return GltfError.at(file, f"invalid JSON: invalid UTF-8 (byte 0x{json_bytes[bad.start]:02X})",
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
