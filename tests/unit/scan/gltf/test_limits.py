"""Reader limits: file size, top-level array sizes, strings, free-form values."""

from __future__ import annotations

import msgspec
import pytest

from pipeline.config import Limits
from pipeline.errors import GltfError
from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.limits import check_document, check_file_size, check_string, check_value

LIMITS = Limits(max_file_bytes=1000, max_json_depth=3, max_elements=4, max_string_length=8)


def error(call, *args) -> str:
    with pytest.raises(GltfError) as caught:
        call(*args)
    return str(caught.value)


def doc(**parts) -> S.Document:
    return msgspec.convert({"asset": {"version": "2.0"}, **parts}, S.Document)


def test_file_size() -> None:
    check_file_size(1000, LIMITS, "f")
    assert error(check_file_size, 1001, LIMITS, "f") == (
        "f: error: file is 1001 bytes, over the limit of 1000 (limits.max_file_bytes)")


def test_top_level_arrays_and_kept_strings() -> None:
    check_document(doc(nodes=[{}] * 4, extensionsUsed=["EXT_abc"]), LIMITS, "f")
    assert error(check_document, doc(nodes=[{}] * 5), LIMITS, "f") == (
        "f: /nodes: error: 5 entries, over the limit of 4 (limits.max_elements)")
    assert error(check_document, doc(extensionsUsed=["short", "EXT_long_name"]), LIMITS, "f") == (
        "f: /extensionsUsed/1: error: string of 13 characters, over the limit of 8 (limits.max_string_length)")
    variants = {"KHR_materials_variants": {"variants": [{"name": "a very long name"}]}}
    assert error(check_document, doc(extensions=variants), LIMITS, "f").startswith(
        "f: /extensions/KHR_materials_variants/variants/0/name: error: string of 16 characters")


def test_check_string_at_a_pointer() -> None:
    check_string("12345678", LIMITS, "f", "/x")
    assert error(check_string, "123456789", LIMITS, "f", "/x").startswith("f: /x: error: string of 9 characters")


def test_free_form_values() -> None:
    check_value({"a": [1, {"b": 2}]}, LIMITS, "f", "/extras")
    assert error(check_value, {"a": [[[1]]]}, LIMITS, "f", "/extras") == (
        "f: /extras: error: nested deeper than 3 levels (limits.max_json_depth)")
    assert error(check_value, [0] * 5, LIMITS, "f", "/extras").startswith("f: /extras: error: 5 entries")
    assert error(check_value, {"n": 2**64}, LIMITS, "f", "/extras") == (
        "f: /extras/n: error: integer does not fit in 64 bits")
    assert error(check_value, {"long key!": 1}, LIMITS, "f", "/extras").startswith("f: /extras: error: string of 9")
    check_value({"n": -(2**63), "m": 2**64 - 1}, LIMITS, "f", "/extras")
