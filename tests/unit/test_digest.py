"""The one canonical serializer: same value, same bytes; hashes over it and over the package's code."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.digest import bytes_hash, canonical_bytes, canonical_object, code_hash, stable_hash

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text()
                    | st.floats(allow_nan=False, allow_infinity=False),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20)


@given(JSON)
def test_canonical_bytes_read_back_to_the_value_and_write_again_to_the_same_bytes(value) -> None:
    data = canonical_bytes(value)
    assert json.loads(data) == value
    assert canonical_bytes(json.loads(data)) == data


def test_key_order_does_not_change_the_bytes_or_the_hash() -> None:
    a, b = {"b": 1, "a": [1, {"y": 2, "x": 3}]}, {"a": [1, {"x": 3, "y": 2}], "b": 1}
    assert canonical_bytes(a) == canonical_bytes(b) == b'{"a":[1,{"x":3,"y":2}],"b":1}'
    assert stable_hash(a) == stable_hash(b) == hashlib.sha256(canonical_bytes(a)).hexdigest()


@given(st.dictionaries(st.text(), JSON, max_size=5))
def test_an_object_assembled_from_canonical_members_equals_the_whole(members) -> None:
    assert canonical_object({k: canonical_bytes(v) for k, v in members.items()}) == canonical_bytes(members)


def test_default_turns_other_objects_into_data() -> None:
    assert canonical_bytes({"s": {3, 1}}, default=sorted) == b'{"s":[1,3]}'
    with pytest.raises(TypeError):
        canonical_bytes({"s": {3, 1}})


def test_bytes_hash_is_sha256_of_the_bytes() -> None:
    assert bytes_hash(b"abc") == hashlib.sha256(b"abc").hexdigest()


def test_code_hash_depends_on_the_parts_named() -> None:
    assert code_hash("digest.py") == code_hash("digest.py")
    assert len({code_hash("digest.py"), code_hash("errors.py"), code_hash("digest.py", "errors.py")}) == 3
    assert code_hash("rules") != code_hash("rules/expr.py")


def test_sorted_unique_keeps_values_whose_canonical_bytes_differ_and_drops_repeats():
    from pipeline.digest import sorted_unique
    assert sorted_unique([True, 1, 1, True, 0.0, -0.0, 0.0, "a", 2]) == ["a", -0.0, 0.0, 1, 2, True]
    assert sorted_unique([{"b": 1}, {"a": 2}, {"b": 1}]) == [{"a": 2}, {"b": 1}]  # dicts: by their bytes
