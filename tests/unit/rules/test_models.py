"""Loading rule sets: the built-in pbr family, YAML safety, all errors at once, the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rules_fixtures import pbr, write_rules

from pipeline.checked import Invalid, convert, field_docs
from pipeline.builtin import builtin_materials_dir, builtin_rules_dir
from pipeline.cli import main
from pipeline.errors import RuleError
from pipeline.rules.load import load_ruleset_text, load_rulesets
from pipeline.rules.models import Feature, RuleSet
from paths import REPO

DOC = REPO / "docs" / "architecture.md"
MINIMAL = """shader: {name}
sources: {{vertex: a.vert, fragment: a.frag}}
features:
  A: {{type: bool}}
derive:
  A: {expr}
passes:
  main: {{features: all}}
"""


def doc_feature_table() -> dict[str, tuple]:
    rows = {}
    table = DOC.read_text(encoding="utf-8").split("## The pbr feature table")[1].split("\n\n")[1]
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].strip("`")
        domain = "bool" if cells[1] == "bool" else tuple(v.strip() for v in cells[1].split(","))
        constant = re.search(r"constant_id (\d+)", cells[2])
        rows[name] = (domain, cells[2].split()[0], int(constant[1]) if constant else None)
    return rows


def test_pbr_implements_the_documented_feature_table():
    rs = pbr()
    table = doc_feature_table()
    assert list(rs.features) == list(table)
    for name, (domain, mode, constant_id) in table.items():
        f = rs.features[name]
        values = "bool" if f.type == "bool" else tuple(str(v) for v in f.values)
        assert (values, f.mode, f.constant_id) == (domain, mode, constant_id), name
    assert set(rs.derive) == {n for n, f in rs.features.items() if not f.runtime}  # the renderer sets the axes
    assert {n for n, f in rs.features.items() if f.runtime} == {"SHADOWS", "QUALITY"}


def test_pbr_passes_and_sources():
    rs = pbr()
    coverage = {"ALPHA_MODE", "BASE_COLOR_MAP", "UV_SETS", "TEXTURE_TRANSFORM", "VERTEX_COLOR", "SKINNING",
                "MORPH_TARGETS", "MORPH_NORMAL", "MORPH_TANGENT", "INSTANCING"}
    assert set(rs.passes) == {"depth", "shadow", "forward"}
    for name in ("depth", "shadow"):
        assert set(rs.compiled.passes[name].features) == coverage
        assert rs.passes[name].skip_when == "ALPHA_MODE == 'BLEND'"
    assert rs.compiled.passes["forward"].features == tuple(rs.features)
    assert (rs.sources["vertex"].file, rs.sources["fragment"].file) == ("pbr/pbr.vert", "pbr/pbr.frag")


def test_pbr_sources_exist_in_the_builtin_materials(tmp_path):
    rulesets = load_rulesets(builtin_rules_dir(), materials_dir=builtin_materials_dir())
    sources = {s.file for rs in rulesets for s in rs.sources.values()}
    assert "pbr/pbr.frag" in sources and all((builtin_materials_dir() / f).is_file() for f in sources)
    (tmp_path / "pbr").mkdir()                                   # the same rules, a library lacking pbr.frag
    (tmp_path / "pbr" / "pbr.vert").write_bytes((builtin_materials_dir() / "pbr" / "pbr.vert").read_bytes())
    with pytest.raises(RuleError, match="pbr/pbr.frag"):
        load_rulesets(builtin_rules_dir(), materials_dir=tmp_path)


def test_models_are_frozen_strict_and_documented():
    rs = pbr()
    with pytest.raises(AttributeError):
        rs.shader = "x"
    with pytest.raises(Invalid, match="colour: unknown key"):
        convert({"type": "bool", "values": [False, True], "colour": "red"}, Feature)
    with pytest.raises(Invalid, match="values.0: expected bool | int | str, got float"):
        convert({"type": "int", "values": [1.5]}, Feature)
    for model in (RuleSet, Feature):
        docs = field_docs(model)
        assert "_compiled" not in docs and all(docs.values()), docs


def test_every_error_of_every_file_at_once(tmp_path):
    write_rules(tmp_path, "a.yaml", MINIMAL.format(name="a", expr="material.unlitt"))
    write_rules(tmp_path, "b.yaml", MINIMAL.format(name="b", expr="mesh.normalz"))
    with pytest.raises(RuleError) as info:
        load_rulesets(tmp_path)
    lines = [str(d) for d in info.value.diagnostics]
    assert len(lines) == 2
    assert lines[0].endswith("a.yaml:6:6: error: unknown fact 'material.unlitt' (did you mean 'material.unlit'?)")
    assert lines[1].endswith("b.yaml:6:6: error: unknown fact 'mesh.normalz' (did you mean 'mesh.normals'?)")


def test_paths_are_shown_as_given(tmp_path, monkeypatch):
    write_rules(tmp_path / "rules", "a.yaml", MINIMAL.format(name="a", expr="material.unlitt"))
    monkeypatch.chdir(tmp_path)
    for given in (Path("rules"), tmp_path / "rules"):
        with pytest.raises(RuleError) as info:
            load_rulesets(given)
        assert str(info.value).startswith("rules/a.yaml:6:6: error:")


def test_rulesets_are_sorted_by_shader(tmp_path):
    write_rules(tmp_path, "1.yaml", MINIMAL.format(name="zeta", expr="material.unlit"))
    write_rules(tmp_path, "2.yaml", MINIMAL.format(name="alpha", expr="material.unlit"))
    assert [r.shader for r in load_rulesets(tmp_path)] == ["alpha", "zeta"]


def test_yaml_11_booleans_stay_strings():
    text = MINIMAL.format(name="a", expr="material.unlit").replace(
        "  A: {type: bool}", "  A: {type: bool}\n  ANSWER: {values: [NO, YES, OFF]}")
    rs = load_ruleset_text(text, "a.yaml")
    assert rs.features["ANSWER"].values == ("NO", "YES", "OFF")


def test_merge_keys_reuse_a_pass():
    text = MINIMAL.format(name="a", expr="material.unlit").replace(
        "  main: {features: all}", "  main: &m {features: [A], skip_when: A}\n  other:\n    <<: *m\n    features: all")
    rs = load_ruleset_text(text, "a.yaml")
    assert rs.passes["other"].skip_when == "A" and rs.passes["other"].features == "all"


def test_python_tags_never_construct_anything(tmp_path):
    marker = tmp_path / "pwned"
    text = f"shader: !!python/object/apply:os.system ['touch {marker}']\n"
    with pytest.raises(RuleError) as info:
        load_ruleset_text(text, "a.yaml")
    assert "is not allowed" in str(info.value) and not marker.exists()


def test_missing_folder_is_a_user_error(tmp_path):
    with pytest.raises(RuleError):
        load_rulesets(tmp_path / "nope")


def test_rules_check_ok_summary():
    result = CliRunner().invoke(main, ["rules", "check"])
    assert result.exit_code == 0, result.output
    assert re.match(r"rules OK: 3 families, 39 features, 5 passes \(.*rules\)", result.output.strip())
