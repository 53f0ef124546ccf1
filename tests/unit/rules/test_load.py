"""rules.load: reading rule-set files into compiled rule sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import RuleError
from pipeline.rules.load import display_path, load_ruleset_text, load_rulesets

RULESET = "shader: {name}\nsources: {{vertex: t.vert, fragment: t.frag}}\nfeatures: {{F: {{type: bool}}}}\n" \
          "passes: {{main: {{}}}}\n"


def test_a_folder_loads_sorted_by_shader(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(RULESET.format(name="zeta"))
    (tmp_path / "b.yaml").write_text(RULESET.format(name="alpha"))
    (tmp_path / "notes.txt").write_text("not a rule set")
    loaded = load_rulesets(tmp_path)
    assert [r.shader for r in loaded] == ["alpha", "zeta"]
    assert loaded[0].compiled.domains["F"].values == (False, True)


def test_problems_of_every_file_come_at_once(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(RULESET.format(name="same"))
    (tmp_path / "b.yaml").write_text(RULESET.format(name="same"))
    (tmp_path / "c.yaml").write_text("- a list\n")
    with pytest.raises(RuleError) as info:
        load_rulesets(tmp_path)
    found = sorted((d.location.file, d.location.line, d.message) for d in info.value.diagnostics)
    assert found == [("b.yaml", 1, "shader 'same' is already defined in a.yaml"),
                     ("c.yaml", 1, "a rule set is a YAML mapping")]


def test_a_missing_folder_and_an_invalid_text_are_located(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="rules folder not found"):
        load_rulesets(tmp_path / "nope")
    with pytest.raises(RuleError) as info:
        load_ruleset_text("shader: t\nfeatures: {F: {type: float}}\npasses: {main: {}}\n", "rules/t.yaml")
    assert all(d.location.file == "rules/t.yaml" for d in info.value.diagnostics)
    assert any(d.location.line == 2 for d in info.value.diagnostics)


def test_display_path_is_relative_to_the_working_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "rules" / "a.yaml") == "rules/a.yaml"
    assert display_path(Path("rules/a.yaml")) == "rules/a.yaml"
    assert display_path(Path("/elsewhere/a.yaml")) == "/elsewhere/a.yaml"
