"""rules.build: every load-time check of a rule set, all problems at once, located."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    return compile_ruleset(RuleSet.model_validate({**doc.data(), "path": "rules/t.yaml"}), doc, materials)


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
