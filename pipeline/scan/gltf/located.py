"""Located errors for what the structs reject: ``file: /json/pointer: error: message``.

When msgspec refuses a file, :func:`locate` parses the same bytes as plain JSON and walks
the value against the structs (:mod:`pipeline.scan.gltf.walk`); the first bad value is
the error, with ``(and N more)`` when there are others.  JSON syntax errors are located
at ``file:LINE:COL``, invalid UTF-8 at its first bad byte (line, byte column).  JSON
nested deeper than 200 levels is refused here ("recursion limit exceeded").
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pipeline.errors import GltfError
from pipeline.scan.gltf.pointer import pointer
from pipeline.scan.gltf.walk import problems

_JSON_POS = re.compile(r"^Invalid JSON: (.*) at line (\d+) column (\d+)$")


@functools.cache
def _json():
    """pydantic's JSON parser (its errors give line and column), imported on the error path only."""
    from pydantic import TypeAdapter

    return TypeAdapter(Any)


def locate(hint: Any, json_bytes: bytes, file: str) -> Any:
    """The parsed JSON value of ``json_bytes`` when it is what ``hint`` (a struct) declares;
    otherwise raises the located GltfError of its first problem."""
    value = parse(json_bytes, file)
    found = problems(value, hint)
    if found:
        path, message = found[0]
        if len(found) > 1:
            message += f" (and {len(found) - 1} more)"
        raise GltfError.at(file, message, pointer=pointer(*path))
    return value


def parse(json_bytes: bytes, file: str) -> Any:
    """JSON text to Python values (integers of any size); a syntax error is located at its line and column."""
    from pydantic import ValidationError

    try:
        return _json().validate_json(json_bytes)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        if "unicode" in first["msg"]:
            bad = utf8_error(json_bytes, file)
            if bad is not None:
                raise bad from None
        match = _JSON_POS.match(first["msg"])
        if match:
            raise GltfError.at(file, f"invalid JSON: {match.group(1)}",
                               line=int(match.group(2)), col=max(1, int(match.group(3)))) from None
        raise GltfError.at(file, first["msg"].replace("Invalid JSON", "invalid JSON")) from None


def utf8_error(json_bytes: bytes, file: str) -> GltfError | None:
    """The located error of the first byte of ``json_bytes`` that is not UTF-8, or None when all are."""
    try:
        json_bytes.decode("utf-8")
    except UnicodeDecodeError as bad:
        line_start = json_bytes.rfind(b"\n", 0, bad.start) + 1
        return GltfError.at(file, f"invalid JSON: invalid UTF-8 (byte 0x{json_bytes[bad.start]:02X})",
                            line=json_bytes.count(b"\n", 0, bad.start) + 1, col=bad.start - line_start + 1)
    return None
