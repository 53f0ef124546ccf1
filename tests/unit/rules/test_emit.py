"""rules.emit: how a feature's value becomes #define lines."""

from __future__ import annotations

import pytest
from rules_fixtures import mesh

from pipeline.rules.emit import (TemplateError, define_problem, feature_defines, format_value, render_set,
                                 set_names, template_fields)
from pipeline.checked import convert
from pipeline.rules.models import Feature
from pipeline.rules.expr_types import Domain

ALPHA = Domain("ALPHA_MODE", "enum", ("OPAQUE", "MASK", "BLEND"))


def test_template_fields_and_malformed_templates() -> None:
    assert template_fields("HAS_{key}_{type}") == ("key", "type")
    with pytest.raises(TemplateError, match="starts with a digit"):
        template_fields("1_{key}")
    with pytest.raises(TemplateError, match="is not a placeholder name"):
        template_fields("HAS_{1x}")


def test_values_print_as_in_key_text() -> None:
    assert (format_value(True), format_value(False), format_value(4), format_value("MASK")) == ("1", "0", "4", "MASK")


def feature(**fields) -> Feature:
    return convert(fields, Feature)


def test_define_problems() -> None:
    assert define_problem(feature(type="bool", define="__X")) == "'__X' is not a valid #define name"
    assert define_problem(feature(type="bool", define="HAS_{key}")).endswith("(placeholders are for set features)")
    assert "may hold only letters" in define_problem(feature(type="bool", define="HAS-X"))
    assert "needs a {field} placeholder" in define_problem(feature(type="set", define="HAS_UV"))
    assert define_problem(feature(type="set", define="HAS_{key}")) is None


def test_a_set_feature_renders_sorted_safe_names() -> None:
    attributes = mesh("TEXCOORD_0", "_PRESSURE").attributes
    value = render_set("HAS_{key}_{type}", "key", attributes)
    assert set_names(value) == ["HAS_POSITION_VEC3", "HAS_TEXCOORD_0_VEC2", "HAS__PRESSURE_VEC4"]
    assert render_set("V_{value}", "key", ["a.b", "c"]) == "V_a_b+V_c"
    with pytest.raises(TemplateError, match="no field 'nope'"):
        render_set("X_{nope}", "key", attributes)


def test_emit_styles_of_an_enum() -> None:
    value = feature(values=["OPAQUE", "MASK", "BLEND"])
    assert feature_defines(value, "ALPHA_MODE", ALPHA, "static", "MASK", None) == [
        ("ALPHA_MODE_OPAQUE", "0"), ("ALPHA_MODE_MASK", "1"), ("ALPHA_MODE_BLEND", "2"), ("ALPHA_MODE", "1")]
    ifdef = feature(values=["OPAQUE", "MASK", "BLEND"], emit="ifdef")
    assert feature_defines(ifdef, "ALPHA_MODE", ALPHA, "static", "MASK", None) == [("ALPHA_MODE_MASK", "1")]
    assert feature_defines(ifdef, "ALPHA_MODE", ALPHA, "static", "OPAQUE", None) == []
    symbol = feature(values=["OPAQUE", "MASK", "BLEND"], emit="symbol")
    assert feature_defines(symbol, "ALPHA_MODE", ALPHA, "static", "BLEND", None)[-1] == \
        ("ALPHA_MODE", "ALPHA_MODE_BLEND")


def test_a_specialization_feature_gives_its_constant_id() -> None:
    spec = feature(type="bool", mode="specialization", constant_id=3)
    domain = Domain("DOUBLE_SIDED", "bool", (False, True))
    assert feature_defines(spec, "DOUBLE_SIDED", domain, "specialization", True, 3) == [
        ("DOUBLE_SIDED_SPEC_ID", "3")]
