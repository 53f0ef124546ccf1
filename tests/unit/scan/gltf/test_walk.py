"""The walk of a parsed JSON value against the structs: paths, messages, order and count."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from msgspec import Meta

from pipeline.scan.gltf import structs as S
from pipeline.scan.gltf.walk import problems

ASSET = {"version": "2.0"}


def doc(**parts) -> dict:
    return {"asset": ASSET, **parts}


@pytest.mark.parametrize(("value", "hint", "expected"), [
    (1.0, int, "input should be a valid integer"),
    (True, int, "input should be a valid integer"),
    ("1", float, "input should be a valid number"),
    (False, float, "input should be a valid number"),
    (float("inf"), float, "input should be a finite number"),
    (float("nan"), float, "input should be a finite number"),
    (2**1100, float, "input should be a finite number"),
    (3, str, "input should be a valid string"),
    (0, bool, "input should be a valid boolean"),
    ({}, list[int], "input should be a valid array"),
    ([], dict[str, int], "input should be an object"),
    ([], S.Asset, "input should be an object"),
    (None, S.Primitive, "input should be an object"),
    ("MASKED", Literal["OPAQUE", "MASK", "BLEND"], "input should be 'OPAQUE', 'MASK' or 'BLEND'"),
    (5126.0, Literal[5125, 5126], "input should be 5125 or 5126"),
    ([5126], Literal[5125, 5126], "input should be 5125 or 5126"),
    ({"a": 1}, Literal["A"], "input should be 'A'"),
    (-1, Annotated[int, Meta(ge=0)], "input should be greater than or equal to 0"),
    (0, Annotated[float, Meta(gt=0)], "input should be greater than 0"),
    (7, Annotated[int, Meta(le=6)], "input should be less than or equal to 6"),
    ([], Annotated[list[int], Meta(min_length=1)], "list should have at least 1 item after validation, not 0"),
    ({}, Annotated[dict[str, int], Meta(min_length=1)],
     "dictionary should have at least 1 item after validation, not 0"),
    ([1, 2, 3], Annotated[list[int], Meta(max_length=2)], "list should have at most 2 items after validation, not 3"),
    ([1, "x", 3], tuple[float, float], "tuple should have at most 2 items after validation, not 3"),
])
def test_what_each_type_expects(value, hint, expected) -> None:
    assert problems(value, hint) == [((), expected)]


@pytest.mark.parametrize(("value", "hint"), [
    (1, float), (2**64, int), (None, int | None), ({"x": [None]}, Any), ([1.5, 2], tuple[float, float]),
    ({"version": "2", "unknown": [1, "x"]}, S.Asset), (["a"], tuple[str, ...]),
])
def test_what_each_type_accepts(value, hint) -> None:
    assert problems(value, hint) == []


def test_paths_follow_the_document_to_the_bad_value() -> None:
    value = doc(meshes=[{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": -2}}]}])
    assert problems(value, S.Document) == [
        (("meshes", 0, "primitives", 0, "attributes", "NORMAL"), "input should be greater than or equal to 0")]


def test_a_missing_property_and_a_short_fixed_array_are_missing_at_their_place() -> None:
    assert problems({}, S.Document) == [(("asset",), "required property is missing")]
    assert problems(doc(materials=[{"emissiveFactor": [1, 0]}]), S.Document) == [
        (("materials", 0, "emissiveFactor", 2), "required property is missing")]


def test_optional_typed_dict_keys_may_be_absent() -> None:
    assert problems(doc(nodes=[{}], accessors=[{"componentType": 5126, "count": 1, "type": "VEC3"}]),
                    S.Document) == []
    assert problems(doc(accessors=[{"componentType": 5126, "type": "VEC3"}]), S.Document) == [
        (("accessors", 0, "count"), "required property is missing")]


def test_problems_come_in_declaration_order_not_input_order() -> None:
    value = {"materials": [{"alphaMode": "X"}], "scenes": [{"nodes": [-1]}], "asset": {"version": 2}}
    assert [path for path, _ in problems(value, S.Document)] == [
        ("asset", "version"), ("scenes", 0, "nodes", 0), ("materials", 0, "alphaMode")]


def test_a_too_long_list_is_one_problem_and_bounds_wait_for_valid_items() -> None:
    matrix = Annotated[list[float], Meta(min_length=16, max_length=16)]
    assert problems(["x"] * 17, matrix) == [((), "list should have at most 16 items after validation, not 17")]
    assert problems([1, "x"], matrix) == [((1,), "input should be a valid number")]


def test_raw_extensions_are_walked_as_their_struct_and_unknown_names_left_alone() -> None:
    material = {"extensions": {"KHR_materials_volume": {"attenuationDistance": 0},
                               "EXT_anything": 5, "others": 5}}
    assert problems(doc(materials=[material]), S.Document) == [
        (("materials", 0, "extensions", "KHR_materials_volume", "attenuationDistance"),
         "input should be greater than 0")]
    primitive = {"attributes": {}, "extensions": {"KHR_materials_variants": {"mappings": []}}}
    assert problems(doc(meshes=[{"primitives": [primitive]}]), S.Document) == [
        (("meshes", 0, "primitives", 0, "extensions", "KHR_materials_variants", "mappings"),
         "list should have at least 1 item after validation, not 0")]


def test_raw_extensions_keep_whether_they_may_be_null() -> None:
    assert problems(doc(materials=[{"extensions": None}]), S.Document) == []
    assert problems(doc(meshes=[{"primitives": [{"attributes": {}, "extensions": None}]}]), S.Document) == [
        (("meshes", 0, "primitives", 0, "extensions"), "input should be an object")]


def test_extensions_decoded_directly_are_walked_with_every_field() -> None:
    assert problems(doc(nodes=[{"extensions": {"others": 5}}]), S.Document) == [
        (("nodes", 0, "extensions", "others"), "input should be a valid array")]


def test_the_buffer_document_is_walked_too() -> None:
    value = {"bufferViews": [{"buffer": 0, "byteLength": 4, "byteStride": 2}]}
    assert problems(value, S.BufferDocument) == [
        (("bufferViews", 0, "byteStride"), "input should be greater than or equal to 4")]


def test_every_problem_is_listed() -> None:
    value = doc(nodes=[{"mesh": "a", "skin": -1}, {"children": [1.5]}])
    assert len(problems(value, S.Document)) == 3
