"""Runtime axes: declared in the rules, expanded per combination, restricted by pipeline.toml."""

from __future__ import annotations

import pytest
from rules_fixtures import facts, mesh, pbr

from pipeline.errors import ConfigError, RuleError
from pipeline.keys.evaluate import evaluate
from pipeline.keys.fallback import fallback_key
from pipeline.keys.key import PermutationKey
from pipeline.rules.axes import combinations, multiplier, restrict
from pipeline.rules.load import load_ruleset_text

FAMILY = """\
shader: toy
sources: {vertex: pbr/pbr.vert, fragment: pbr/pbr.frag}
features:
  LIT: {type: bool}
  SHADOWS: {type: bool, runtime: true, when: LIT}
  LIGHTS: {values: [1, 2, 4], runtime: true}
  FOG: {type: bool, runtime: true, mode: dynamic}
derive:
  LIT: material.unlit == False
passes:
  forward: {features: all, fallback: {}}
  depth: {features: [LIT]}
"""


def toy(text: str = FAMILY):
    return load_ruleset_text(text, "toy.yaml")


def forward(uses):
    return {u.key.text: u.axes for u in uses if u.key.pass_name == "forward"}


def test_every_combination_is_a_key_and_the_default_stays_out_of_the_text():
    lit = forward(evaluate([toy()], facts(mesh("NORMAL"))))
    assert sorted(lit) == ["toy/forward{LIGHTS=2,LIT=1,SHADOWS=1}", "toy/forward{LIGHTS=2,LIT=1}",
                           "toy/forward{LIGHTS=4,LIT=1,SHADOWS=1}", "toy/forward{LIGHTS=4,LIT=1}",
                           "toy/forward{LIT=1,SHADOWS=1}", "toy/forward{LIT=1}"]
    assert lit["toy/forward{LIGHTS=4,LIT=1,SHADOWS=1}"] == ({"LIGHTS": 4, "SHADOWS": True},)
    # the depth pass does not read the axes: one key, no combinations
    depth = [u for u in evaluate([toy()], facts(mesh("NORMAL"))) if u.key.pass_name == "depth"]
    assert [(u.key.text, u.axes) for u in depth] == [("toy/depth{LIT=1}", ())]


def test_combinations_that_normalize_to_one_key_are_one_key():
    unlit = forward(evaluate([toy()], facts(mesh("NORMAL"), {"unlit": True})))
    assert unlit["toy/forward{LIT=0}"] == ({"LIGHTS": 1, "SHADOWS": False}, {"LIGHTS": 1, "SHADOWS": True})
    assert len(unlit) == 3  # SHADOWS collapses (when: LIT), LIGHTS does not


def test_a_dynamic_axis_and_a_what_if_dynamic_axis_are_not_expanded():
    assert multiplier(toy(), "forward") == 2 * 3
    as_dynamic = forward(evaluate([toy()], facts(mesh("NORMAL")), {"LIGHTS": "dynamic"}))
    assert len(as_dynamic) == 2 and all("LIGHTS" not in text for text in as_dynamic)
    only = forward(evaluate([toy()], facts(mesh("NORMAL")), {"LIGHTS": ("only", (4,))}))
    assert sorted(only) == ["toy/forward{LIGHTS=4,LIT=1,SHADOWS=1}", "toy/forward{LIGHTS=4,LIT=1}"]


def test_key_text_parses_with_or_without_a_default_axis():
    rs = toy()
    short = PermutationKey.parse("toy/forward{LIT=1}", [rs])
    assert short == PermutationKey.parse("toy/forward{LIGHTS=1,LIT=1,SHADOWS=0}", [rs])
    assert short.text == "toy/forward{LIT=1}"
    assert fallback_key(rs, "forward").text == "toy/forward{LIT=0}"


def test_a_runtime_axis_has_no_derive():
    text = FAMILY.replace("  LIT: material.unlit == False\n", "  LIT: material.unlit == False\n  SHADOWS: true\n")
    with pytest.raises(RuleError) as err:
        toy(text)
    assert "toy.yaml:10:3: error: SHADOWS is a runtime axis" in str(err.value)


def test_a_runtime_axis_lists_its_values():
    with pytest.raises(RuleError, match="a runtime axis lists its values"):
        toy(FAMILY.replace("LIGHTS: {values: [1, 2, 4], runtime: true}", "LIGHTS: {values: open, runtime: true}"))


def test_pipeline_toml_restricts_an_axis_and_names_bad_entries():
    [rs] = restrict([toy()], {"LIGHTS": (4, 1)}, "w/pipeline.toml")
    assert rs.compiled.axes["LIGHTS"] == (1, 4) and toy().compiled.axes["LIGHTS"] == (1, 2, 4)
    assert combinations({"B": (1, 2), "A": ("X",)}) == [(("A", "X"), ("B", 1)), (("A", "X"), ("B", 2))]
    with pytest.raises(ConfigError) as err:
        restrict([toy()], {"LIGHTS": (3,), "SHADOW": (True,)}, "w/pipeline.toml")
    text = str(err.value)
    assert "w/pipeline.toml: /axes/LIGHTS: error: 3 is not a value of toy's LIGHTS (values: 1, 2, 4)" in text
    assert "'SHADOW' is not a runtime axis of any rule set (runtime axes: FOG, LIGHTS, SHADOWS)" in text


def test_the_builtin_pbr_family_declares_shadows_and_quality():
    rs = pbr()
    assert rs.compiled.axes == {"SHADOWS": (False, True), "QUALITY": ("HIGH", "LOW")}
    assert multiplier(rs, "forward") == 4 and multiplier(rs, "depth") == 1
