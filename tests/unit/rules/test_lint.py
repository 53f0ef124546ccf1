"""rules.lint: ``pipeline rules check`` loads rule sets, then finds what loading alone accepts."""

from __future__ import annotations

from pathlib import Path

import yaml
from rules_fixtures import small_ruleset, write_rules

from pipeline.rules.counts import DEFAULT_MAX_CELLS
from pipeline.rules.lint import LintReport, lint_rules, lint_ruleset

BOOLS = {"A": {"type": "bool"}, "B": {"type": "bool"}}
DERIVED = {"A": "material.unlit", "B": "mesh.normals"}


def family(shader: str, features: dict, passes: dict, **extra) -> str:
    return yaml.safe_dump({"shader": shader, "sources": {"vertex": "t.vert", "fragment": "t.frag"},
                           "features": features, "derive": {n: "material.unlit" for n in features},
                           "passes": passes, **extra}, sort_keys=False)


def messages(rs) -> list[str]:
    return [d.message for d in lint_ruleset(rs)]


def test_a_folder_that_fails_to_load_has_its_load_errors_and_no_rule_sets(tmp_path: Path) -> None:
    rules = write_rules(tmp_path / "rules", "a.yaml", family("a", BOOLS, {"main": {"features": "all"}}))
    (rules / "b.yaml").write_text("shader: b\nfeatures: [\n")
    report = lint_rules(rules)
    assert report.rulesets == []  # one bad file: nothing is linted, as nothing is cooked
    assert [(d.file, d.line) for d in report.diagnostics] == [(str(rules / "b.yaml"), 3)]
    doc = report.to_json()
    assert (doc["ok"], doc["errors"], doc["warnings"], doc["rulesets"]) == (False, 1, 0, [])
    assert lint_rules(tmp_path / "missing").errors[0].message == "rules folder not found"


def test_the_summary_and_document_count_every_family_sorted_by_shader(tmp_path: Path) -> None:
    rules = write_rules(tmp_path, "1.yaml", family("zeta", {"A": {"type": "bool"}}, {"main": {"features": "all"}}))
    three = {"A": {"type": "bool"}, "B": {"type": "bool"}, "M": {"values": ["X", "Y", "Z"]}}
    (rules / "2.yaml").write_text(family("alpha", three, {"one": {"features": ["A"]}, "two": {"features": "all"}},
                                         normalize=[{"when": "A", "set": {"B": False}}]))
    report = lint_rules(rules)
    assert report.summary() == f"2 families, 4 features, 3 passes ({rules.as_posix()})"
    doc = report.to_json()
    assert [r["family"] for r in doc["rulesets"]] == ["alpha", "zeta"]
    # alpha/two: 2 * 2 * 3 possible; A=true with B=true is normalized away: 3 of the 4 (A, B) pairs stay
    assert doc["rulesets"][0]["passes"] == {"one": {"possible": 2, "valid": 2}, "two": {"possible": 12, "valid": 9}}
    assert doc["rulesets"][1]["passes"] == {"main": {"possible": 2, "valid": 2}}
    assert doc["ok"] and doc["errors"] == doc["warnings"] == 0


def test_a_warning_is_reported_but_does_not_fail_the_check() -> None:
    rs = small_ruleset(BOOLS, derive=DERIVED, passes={"main": {"features": ["A"]}})
    report = LintReport("rules", [rs], lint_ruleset(rs))
    (warning,) = report.diagnostics
    assert (warning.severity, warning.message) == ("warning", "feature 'B' is read by no pass")
    assert report.errors == []
    doc = report.to_json()
    assert (doc["ok"], doc["errors"], doc["warnings"]) == (True, 0, 1)
    assert doc["diagnostics"] == [warning.to_json()]


def test_a_feature_read_only_by_a_define_s_when_is_read() -> None:
    defines = {"HAS_B": {"when": "B", "value": 1}}
    rs = small_ruleset(BOOLS, derive=DERIVED, passes={"main": {"features": ["A"]}}, defines=defines)
    assert messages(rs) == []


def test_problems_come_in_file_order_whatever_their_kind() -> None:
    features = {"U": {"type": "bool"}, "A": {"type": "bool"}, "B": {"type": "bool"}, "C": {"values": [0, 1, 2]}}
    rs = small_ruleset(features, derive={"U": "mesh.normals", "A": "material.unlit", "C": "mesh.texcoordSets"},
                       passes={"main": {"features": ["A", "B", "C"]}},
                       normalize=[{"when": "C > 2", "set": {"A": False}}, {"when": "A", "set": {"A": True}}])
    found = lint_ruleset(rs)
    assert [d.location.line for d in found] == sorted(d.location.line for d in found)
    assert [(d.severity, d.message) for d in found] == [
        ("warning", "feature 'U' is read by no pass"),
        ("error", "feature 'B' is never derived (always 0)"),  # the bool default False prints as its define value
        ("error", "normalize rule can never fire: 'C > 2' is never true"),
        ("error", "normalize rule never changes anything: whenever it fires, its values are already set")]


def test_a_family_rule_is_judged_once_however_many_passes_share_it() -> None:
    passes = {name: {"features": "all"} for name in ("depth", "forward", "shadow")}
    rs = small_ruleset(BOOLS, derive=DERIVED, passes=passes, normalize=[{"when": "A and not A", "set": {"B": True}}])
    assert messages(rs) == ["normalize rule can never fire: 'A and not A' is never true"]


def test_a_pass_s_own_rule_is_judged_too() -> None:
    own = [{"when": "B", "set": {"B": True}}]
    passes = {"main": {"features": "all"}, "depth": {"features": "all", "normalize": own}}
    rs = small_ruleset(BOOLS, derive=DERIVED, passes=passes)
    (found,) = lint_ruleset(rs)
    assert found.message.startswith("normalize rule never changes anything")
    assert found.location == rs.compiled.passes["depth"].rules[0].location


def test_the_rule_a_feature_s_when_makes_is_not_judged() -> None:
    features = {"A": {"type": "bool"}, "B": {"type": "bool", "when": "A or not A"}}
    rs = small_ruleset(features, derive=DERIVED)
    assert [r.implicit for r in rs.compiled.passes["main"].rules] == [True]  # 'not (A or not A)': never fires
    assert messages(rs) == []


def test_a_rule_reading_an_open_feature_is_not_judged() -> None:
    features = {"A": {"type": "bool"}, "N": {"values": "open"}}
    rs = small_ruleset(features, derive={"A": "material.unlit", "N": "mesh.texcoordSets"},
                       normalize=[{"when": "N > 1000", "set": {"A": False}}])
    assert messages(rs) == []  # only N's default is known here; content decides the rest
    assert LintReport("rules", [rs]).to_json()["rulesets"][0]["passes"]["main"] == {"possible": "open",
                                                                                    "valid": "open"}


def test_a_rule_over_too_many_combinations_is_neither_judged_nor_counted() -> None:
    names = [f"F{i}" for i in range(DEFAULT_MAX_CELLS.bit_length())]  # 2**len(names) > DEFAULT_MAX_CELLS
    features = {n: {"type": "bool"} for n in names}
    never = " and ".join(names) + " and not F0"
    rs = small_ruleset(features, derive={n: "material.unlit" for n in names},
                       normalize=[{"when": never, "set": {"F1": True}}])
    assert messages(rs) == []
    doc = LintReport("rules", [rs]).to_json()
    assert doc["rulesets"][0]["passes"]["main"] == {"possible": None, "valid": None}
