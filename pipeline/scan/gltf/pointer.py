"""JSON pointers (RFC 6901) naming a place in a glTF document: ``/meshes/3/primitives/0``."""

from __future__ import annotations


def pointer(*parts: object) -> str:
    """Join path parts into a JSON pointer, escaping ``~`` and ``/`` in keys."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
