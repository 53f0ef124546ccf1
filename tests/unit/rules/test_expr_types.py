"""rules.expr_types: static types of fact paths and what each operator accepts."""

from __future__ import annotations

from typing import Literal, Optional

from pipeline.facts import MaterialFacts, MeshFacts, TextureRef, fact_fields
from pipeline.rules.expr_types import (Domain, SType, classes, compare_problem, has_problem, number_problem,
                                       stype_of, unwrap_optional)


def test_optional_annotations_are_unwrapped() -> None:
    assert unwrap_optional(Optional[int]) == (int, True)
    assert unwrap_optional(TextureRef | None) == (TextureRef, True)
    assert unwrap_optional(str) == (str, False)


def test_fact_fields_get_their_static_kind() -> None:
    assert stype_of(fact_fields(MeshFacts)["attributes"].annotation, "mesh.attributes").kind == "dict"
    assert stype_of(fact_fields(MaterialFacts)["normalTexture"].annotation, "m").model is TextureRef
    alpha = stype_of(fact_fields(MaterialFacts)["alphaMode"].annotation, "material.alphaMode")
    assert alpha.values == frozenset(["OPAQUE", "MASK", "BLEND", None])
    assert stype_of(Literal["a"], "x").kind == "scalar"


def test_classes_of_features_and_values() -> None:
    assert classes(SType("scalar", feature=Domain("F", "set", ("",), open=True))) == frozenset(["set feature"])
    assert classes(SType("scalar", values=frozenset(["a", None]))) == frozenset(["string"])
    assert classes(SType("any")) is None


def test_arithmetic_on_a_string_is_a_problem_and_on_a_number_is_not() -> None:
    text = SType("scalar", str)
    assert number_problem(text, "material.alphaMode", "arithmetic") == \
        "arithmetic needs numbers; 'material.alphaMode' is a string"
    assert number_problem(SType("scalar", int), "1", "arithmetic") is None


def test_comparisons_that_can_never_hold_or_run() -> None:
    number, text = SType("scalar", int), SType("scalar", str)
    assert "is never true" in compare_problem("==", number, text, "n", "'x'")
    assert "cannot compare" in compare_problem("<", number, text, "n", "'x'")
    assert compare_problem("<", number, number, "a", "b") is None
    numbers = SType("seq", int)
    assert "it is never in it" in compare_problem("in", text, numbers, "'x'", "l")


def test_has_takes_an_attribute_name() -> None:
    assert has_problem(SType("scalar", int), "1").startswith("has() takes a vertex attribute name")
    assert has_problem(SType("scalar", str), "'NORMAL'") is None
