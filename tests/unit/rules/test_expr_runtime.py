"""rules.expr_runtime: run-time helpers where absent data is data."""

from __future__ import annotations

import ast
import operator

import pytest
from rules_fixtures import facts, mesh

from pipeline.rules.expr_runtime import (EvalError, arith, bucket_of, compare_op, count_of, extreme, get_attr,
                                         get_item, has_attribute, parse_fact_path, resolve_fact_path)


def test_access_into_absent_data_is_none() -> None:
    f = facts(mesh("NORMAL"))
    assert get_attr(None, "x") is None
    assert get_attr(f.material, "clearcoat") is None
    assert get_attr(f.material, "notAField") is None
    assert get_item({"a": 1}, "b") is None
    assert get_item((1, 2), 5) is None and get_item((1, 2), -1) == 2


def test_fact_paths_parse_and_resolve_with_the_same_semantics() -> None:
    steps = parse_fact_path("material.extras['shader']")
    assert steps == ((False, "material"), (False, "extras"), (True, "shader"))
    f = facts(material={"extras": {"shader": "pbr"}})
    assert resolve_fact_path(f, steps) == "pbr"
    assert resolve_fact_path(f, parse_fact_path("material.clearcoat.clearcoatFactor")) is None


def test_ordering_with_none_is_false_and_mixed_types_fail() -> None:
    less = compare_op(ast.Lt())
    assert less(None, 1) is False and less(1, 2) is True
    with pytest.raises(EvalError, match="cannot compare str with int"):
        less("a", 1)


def test_set_membership_is_by_element_not_substring() -> None:
    member = compare_op(ast.In(), set_feature=True)
    assert member("HAS_UV", "HAS_COLOR+HAS_UV") is True
    assert member("HAS_U", "HAS_COLOR+HAS_UV") is False
    assert compare_op(ast.In())("HAS_U", "HAS_COLOR+HAS_UV") is True  # plain 'in' on a string


def test_arithmetic_with_none_is_none_and_overflow_fails() -> None:
    assert arith(operator.add, None, 1) is None
    assert arith(operator.mul, 3, 4) == 12
    with pytest.raises(EvalError, match="overflow"):
        arith(operator.mul, 2**62, 4)


def test_named_helpers() -> None:
    assert count_of(None) == 0 and count_of((1, 2)) == 2
    with pytest.raises(EvalError):
        count_of(3.5)
    assert extreme(max)(1, None, 3) == 3 and extreme(min)() is None
    assert bucket_of(3, (0, 4, 8)) == 4 and bucket_of(9, (0, 4, 8)) == 8 and bucket_of(None, (0,)) is None
    assert has_attribute(facts(mesh("NORMAL")), "NORMAL") is True
    with pytest.raises(EvalError, match="needs draw facts"):
        has_attribute(None, "NORMAL")
