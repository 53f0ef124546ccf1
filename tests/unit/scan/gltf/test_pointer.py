"""JSON pointers (RFC 6901) of places in a glTF document."""

from __future__ import annotations

from pipeline.scan.gltf.pointer import pointer


def test_parts_are_joined_with_slashes() -> None:
    assert pointer("meshes", 3, "primitives", 0) == "/meshes/3/primitives/0"


def test_tilde_and_slash_are_escaped_tilde_first() -> None:
    assert pointer("attributes", "a/b~c") == "/attributes/a~1b~0c"
    assert pointer("~1") == "/~01"


def test_no_parts_is_the_whole_document() -> None:
    assert pointer() == ""
