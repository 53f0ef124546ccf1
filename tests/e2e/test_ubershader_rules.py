"""The rule language for a studio's own ubershader: emit styles, define templates over
set-valued facts, open integer features, ``when:`` conditions, and their located errors."""

from __future__ import annotations

import textwrap

import pytest
from rules_fixtures import facts, mesh

from pipeline.errors import RuleError
from pipeline.keys.defines import project_defines, stage_defines
from pipeline.keys.evaluate import evaluate
from pipeline.keys.key import KeyTextError, PermutationKey
from pipeline.rules.counts import OPEN, OpenSpaceError, add_counts, count_space, enumerate_valid
from pipeline.rules.load import load_ruleset_text
from paths import TESTS

BASE = """\
shader: studio
sources: {vertex: s/s.vert, fragment: s/s.frag}
features:
  ALPHA: {values: [OPAQUE, MASK, BLEND], emit: symbol, define: ALPHAMODE}
  BLEND_IDX: {values: [OPAQUE, MASK, BLEND]}
  MASK_ONLY: {values: [OPAQUE, MASK, BLEND], emit: ifdef}
  HAS_NORMALS: {emit: ifdef}
  NORMALS_01: {type: bool}
  USE_MORPHING: {emit: ifdef}
  WEIGHT_COUNT: {values: open, when: USE_MORPHING}
  SKIN_SLOTS: {values: [0, 4, 8], emit: ifdef}
  ATTRS: {type: set, as: attribute, define: "HAS_{attribute}_{type}"}
derive:
  ALPHA: material.alphaMode
  BLEND_IDX: material.alphaMode
  MASK_ONLY: material.alphaMode
  HAS_NORMALS: mesh.normals
  NORMALS_01: mesh.normals
  USE_MORPHING: mesh.morphTargets > 0
  WEIGHT_COUNT: max(node.morphWeightCount, mesh.morphTargets)
  ATTRS: mesh.attributes
defines:
  EXTRA: {value: 7, when: USE_MORPHING}
passes:
  forward: {}
"""


def load(text: str = BASE, **replace: str):
    for old, new in replace.items():
        text = text.replace(old, new)
    return load_ruleset_text(text, "rules/studio.yaml")


def key_of(rs, f):
    (use,) = evaluate([rs], f)
    return use.key


def test_emit_styles_templates_and_when_in_preamble_order() -> None:
    rs = load()
    key = key_of(rs, facts(mesh("NORMAL", "TEXCOORD_1", "_PRESSURE", morphTargets=2), material={"alphaMode": "MASK"},
                           node={"morphWeightCount": 2}))
    assert stage_defines(rs, key) == [
        ("PASS_FORWARD", "1"),
        ("ALPHAMODE_OPAQUE", "0"), ("ALPHAMODE_MASK", "1"), ("ALPHAMODE_BLEND", "2"), ("ALPHAMODE", "ALPHAMODE_MASK"),
        ("HAS_NORMAL_VEC3", "1"), ("HAS_POSITION_VEC3", "1"), ("HAS_TEXCOORD_1_VEC2", "1"),
        ("HAS__PRESSURE_VEC4", "1"),
        ("BLEND_IDX_OPAQUE", "0"), ("BLEND_IDX_MASK", "1"), ("BLEND_IDX_BLEND", "2"), ("BLEND_IDX", "1"),
        ("HAS_NORMALS", "1"),
        ("MASK_ONLY_MASK", "1"),
        ("NORMALS_01", "1"),
        ("USE_MORPHING", "1"),
        ("WEIGHT_COUNT", "2"),
        ("EXTRA", "7"),
    ]


def test_ifdef_and_when_emit_nothing_at_the_default() -> None:
    rs = load()
    key = key_of(rs, facts(mesh(morphTargets=0)))
    defines = dict(stage_defines(rs, key))
    assert "HAS_NORMALS" not in defines and "MASK_ONLY" not in defines and "SKIN_SLOTS" not in defines
    assert "USE_MORPHING" not in defines and "WEIGHT_COUNT" not in defines and "EXTRA" not in defines
    assert defines["NORMALS_01"] == "0" and defines["ALPHAMODE"] == "ALPHAMODE_OPAQUE"
    assert key.value("WEIGHT_COUNT") == 0  # the feature's when: resets it


def test_when_resets_an_open_value_so_keys_do_not_split() -> None:
    rs = load(BASE.replace("WEIGHT_COUNT: max(node.morphWeightCount, mesh.morphTargets)",
                           "WEIGHT_COUNT: node.morphWeightCount"))
    a = key_of(rs, facts(mesh(morphTargets=0), node={"morphWeightCount": 3}))
    b = key_of(rs, facts(mesh(morphTargets=0), node={"morphWeightCount": 5}))
    assert a == b and a.value("WEIGHT_COUNT") == 0


def test_set_and_open_values_round_trip_through_key_text() -> None:
    rs = load()
    key = key_of(rs, facts(mesh("COLOR_0", "_PRESSURE", morphTargets=3)))
    assert "ATTRS=HAS_COLOR_0_VEC4+HAS_POSITION_VEC3+HAS__PRESSURE_VEC4" in key.text
    assert "WEIGHT_COUNT=3" in key.text
    assert PermutationKey.parse(key.text, [rs]) == key
    with pytest.raises(KeyTextError, match="any integer"):
        PermutationKey.parse(key.text.replace("WEIGHT_COUNT=3", "WEIGHT_COUNT=x"), [rs])


def test_open_features_make_counts_open_and_enumeration_a_located_error() -> None:
    rs = load()
    assert count_space(rs, "forward").possible == OPEN and count_space(rs, "forward").valid == OPEN
    assert add_counts([3, OPEN]) == OPEN and add_counts([3, 4]) == 7
    with pytest.raises(OpenSpaceError, match=r"WEIGHT_COUNT") as info:
        list(enumerate_valid(rs, "forward"))
    assert str(info.value).startswith("rules/studio.yaml: error:")
    closed = load(BASE.replace("  WEIGHT_COUNT: {values: open, when: USE_MORPHING}\n", "")
                  .replace("  WEIGHT_COUNT: max(node.morphWeightCount, mesh.morphTargets)\n", "")
                  .replace("  ATTRS: {type: set, as: attribute, define: \"HAS_{attribute}_{type}\"}\n", "")
                  .replace("  ATTRS: mesh.attributes\n", ""))
    assert count_space(closed, "forward").possible == 3 * 3 * 3 * 2 * 2 * 2 * 3


@pytest.mark.parametrize("old,new,where,message", [
    ('define: "HAS_{attribute}_{type}"', 'define: "HAS_{attribute}_{typ}"', "rules/studio.yaml:12:",
     "unknown placeholder '{typ}' in the define template of ATTRS (did you mean 'type'?)"),
    ("HAS_NORMALS: {emit: ifdef}", "HAS_NORMALS: {emit: symbol}", "rules/studio.yaml:7:",
     "emit: symbol is for enum features"),
    ("HAS_NORMALS: {emit: ifdef}", "HAS_NORMALS: {emit: ifdf}", "rules/studio.yaml:7:", "ifdef"),
    ("  ATTRS: mesh.attributes", "  ATTRS: mesh.vertexCount", "rules/studio.yaml:21:",
     "set feature ATTRS is derived from a mapping or a list fact"),
    ('define: "HAS_{attribute}_{type}"', 'define: "HAS-{attribute}"', "rules/studio.yaml:12:",
     "may hold only letters, digits, '_' and {field}"),
    ('define: "HAS_{attribute}_{type}"', 'define: "HAS_ATTRIBUTE"', "rules/studio.yaml:12:",
     "needs a {field} placeholder"),
    ("{values: open, when: USE_MORPHING}", "{values: open, when: WEIGHT_COUNT > 0}", "rules/studio.yaml:10:",
     "the when: of WEIGHT_COUNT reads WEIGHT_COUNT itself"),
    ("{values: open, when: USE_MORPHING}", "{values: open, when: USE_MORPHIN}", "rules/studio.yaml:10:",
     "unknown feature 'USE_MORPHIN' (did you mean 'USE_MORPHING'?)"),
    ("define: ALPHAMODE}", "define: 2ALPHA}", "rules/studio.yaml:4:", "starts with a digit"),
    ("{values: open, when: USE_MORPHING}", "{values: opened}", "rules/studio.yaml:10:", "WEIGHT_COUNT"),
])
def test_errors_are_located(old: str, new: str, where: str, message: str) -> None:
    with pytest.raises(RuleError) as info:
        load(**{old: new})
    lines = [str(d) for d in info.value.diagnostics]
    assert any(line.startswith(where) and message in line for line in lines), lines


def test_projection_keeps_names_used_in_code_and_symbol_values() -> None:
    defines = (("PASS_FORWARD", "1"), ("ALPHAMODE_OPAQUE", "0"), ("ALPHAMODE_MASK", "1"),
               ("ALPHAMODE", "ALPHAMODE_MASK"), ("LIGHT_COUNT", "3"), ("UNUSED", "1"))
    used = frozenset({"ALPHAMODE", "LIGHT_COUNT", "u_Lights"})
    assert project_defines(defines, used) == (("ALPHAMODE_MASK", "1"), ("ALPHAMODE", "ALPHAMODE_MASK"),
                                              ("LIGHT_COUNT", "3"))


def test_compile_block_is_validated() -> None:
    text = BASE + textwrap.dedent("""\
        compile:
          - {target: webgl2}
          - {target: webgl2}
        """)
    with pytest.raises(RuleError, match="compile targets must differ"):
        load(text)
    with pytest.raises(RuleError, match="rules/studio.yaml:26:.*vulkan1.2"):
        load(BASE + "compile: {target: vulkan9}\n")
    rs = load(BASE + 'compile: [webgl2, {target: vulkan1.2, relaxed: true, version: "310 es"}]\n')
    assert [t.label for t in rs.compile] == ["webgl2", "vulkan1.2-relaxed"]


def test_the_legacy_family_passes_rules_check() -> None:
    from pipeline.rules.lint import lint_rules
    data = TESTS / "data" / "ubershader"
    report = lint_rules(data / "rules", materials_dir=data / "materials")
    assert [str(d) for d in report.diagnostics] == []
    assert report.summary().startswith("1 families, 16 features, 2 passes")
