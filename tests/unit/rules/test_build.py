"""rules.build: every load-time check of a rule set, all problems at once, located."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from paths import DATA

from pipeline.checked import convert
from pipeline.errors import RuleError
from pipeline.rules.build import MAX_CONSTANT_ID, compile_ruleset
from pipeline.rules.models import RuleSet
from pipeline.rules.yaml_nodes import YamlDocument

TEXT = """\
shader: t
sources: {vertex: t.vert, fragment: t.frag}
features:
  FLAG: {type: bool}
  MODE: {values: [A, B]}
  SPEC: {type: bool, mode: specialization, constant_id: %d}
derive:
  MODE: "'C'"
normalize:
  - {when: FLAG, set: {MODE: D}}
passes:
  main: {render_state: {culling: "'back'"}}
"""


def build(text: str, materials: Path | None = None):
    doc = YamlDocument.parse(text, "rules/t.yaml")
    return compile_ruleset(convert({**doc.data(), "path": "rules/t.yaml"}, RuleSet), doc, materials)


def test_every_problem_is_reported_at_once_in_line_order(tmp_path: Path) -> None:
    with pytest.raises(RuleError) as info:
        build(TEXT % (MAX_CONSTANT_ID + 1), tmp_path)
    found = [(d.location.line, d.message) for d in info.value.diagnostics]
    assert [line for line, _ in found] == sorted(line for line, _ in found)
    messages = "\n".join(m for _, m in found)
    assert "vertex source 't.vert' not found in the materials folder" in messages
    assert f"constant_id {MAX_CONSTANT_ID + 1} is out of range" in messages
    assert "MODE can be derived as 'C', which is not one of its values ('A', 'B')" in messages
    assert "'D' is not a value of MODE" in messages
    assert "unknown render state 'culling'" in messages
    assert (10, "'D' is not a value of MODE (values: 'A', 'B')") in found


def test_a_valid_rule_set_compiles_without_a_materials_folder() -> None:
    fixed = TEXT.replace("\"'C'\"", "\"'B'\"").replace("MODE: D", "MODE: A").replace("culling", "cull")
    compiled = build(fixed % 1)
    assert compiled.constant_ids == {"SPEC": 1}
    assert compiled.passes["main"].static == ("FLAG", "MODE")
    assert [r.set for r in compiled.passes["main"].rules] == [{"MODE": "A"}]


WET = """\
shader: wet
fact_providers: ["%s"]
sources: {vertex: t.vert, fragment: t.frag}
features:
  LEVEL: {values: [0, 1, 2]}
derive:
  LEVEL: %s
passes: {main: {}}
"""


def build_at(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = YamlDocument.parse(text, str(path))
    return compile_ruleset(convert({**doc.data(), "path": str(path)}, RuleSet), doc)


def wet_problems(tmp_path: Path, provider: str, derive: str) -> list[str]:
    (tmp_path / "plugins").mkdir(exist_ok=True)
    shutil.copy(DATA / "plugins" / "sidecar_facts.py", tmp_path / "plugins")
    with pytest.raises(RuleError) as info:
        build_at(tmp_path / "rules" / "wet.yaml", WET % (provider, derive))
    return [f"{d.location.line}:{d.location.col} {d.message}" for d in info.value.diagnostics]


def test_provided_facts_are_typed_by_their_provider_s_declaration(tmp_path: Path) -> None:
    shutil.copytree(DATA / "plugins", tmp_path / "plugins")
    compiled = build_at(tmp_path / "rules" / "wet.yaml", WET % ("../plugins/sidecar_facts.py:Wetness",
                                                                "min(ext.wetness.level, 2)"))
    assert [p.name for p in compiled.providers] == ["wetness"]
    assert compiled.fact_paths() == {"ext.wetness.level"}
    ok = "../plugins/sidecar_facts.py:Wetness"
    assert wet_problems(tmp_path, ok, "ext.wetness.levle") == [
        "7:10 unknown fact 'ext.wetness.levle' (did you mean 'ext.wetness.level'?)"]
    assert wet_problems(tmp_path, ok, "ext.wetnes.level") == [
        "7:10 unknown fact 'ext.wetnes' (did you mean 'ext.wetness'?)"]
    assert wet_problems(tmp_path, ok, "1 if ext.wetness.surface > 1 else 0")[0].startswith(
        "7:15 '>' cannot compare 'ext.wetness.surface' (a string) with '1' (a number)")
    assert wet_problems(tmp_path, ok, "1 if ext.wetness.surface == 'wet' else 0") == [
        "7:38 'wet' is not a value of ext.wetness.surface"]  # an enum: its declared values


def test_facts_of_no_named_provider_and_unloadable_providers_are_located(tmp_path: Path) -> None:
    text = WET.replace('fact_providers: ["%s"]\n', "") % "ext.wetness.level"
    with pytest.raises(RuleError) as info:
        build_at(tmp_path / "rules" / "wet.yaml", text)
    assert [d.message for d in info.value.diagnostics] == ["unknown fact 'ext.wetness'"]
    found = wet_problems(tmp_path, "../plugins/sidecar_facts.py:Gone", "ext.wetness.level")
    assert found[0].startswith("2:18 fact provider plug-in: ") and found[0].endswith("has no attribute 'Gone'")


def test_two_providers_of_one_name_are_located_at_the_second(tmp_path: Path) -> None:
    ok = "../plugins/sidecar_facts.py:Wetness"
    found = wet_problems(tmp_path, f'{ok}", "{ok}', "ext.wetness.level")
    assert len(found) == 1 and found[0].startswith("2:57 two fact providers are named 'wetness' (")
