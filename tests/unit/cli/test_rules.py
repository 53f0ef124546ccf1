"""``pipeline rules check`` and ``pipeline rules facts``: the lint as lines and JSON, the fact reference."""

from __future__ import annotations

import json

from click.testing import CliRunner
from paths import GOLDEN

from pipeline import api
from pipeline.cli.rules import command
from pipeline.rules.fact_reference import fact_paths, reference_markdown

NEVER_DERIVED = GOLDEN / "rules" / "never_derived"


def run(*args: object):
    return CliRunner().invoke(command, [str(a) for a in args])


def test_the_built_in_rules_check_clean_with_their_summary() -> None:
    result = run("check")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"rules OK: {api.check_rules().summary()}\n"


def test_a_problem_is_its_located_line_then_a_count_and_exit_1(monkeypatch) -> None:
    monkeypatch.chdir(NEVER_DERIVED)  # messages name files from the current folder
    result = run("check", "--rules", "rules")
    assert result.exit_code == 1
    expected = (NEVER_DERIVED / "expected.txt").read_text().splitlines()
    assert result.stderr.splitlines() == expected + [f"{len(expected)} error(s) in rules"]
    doc = run("check", "--rules", "rules", "--json")
    assert doc.exit_code == 1  # the same exit code with --json, the problems in the document too
    assert len(json.loads(doc.stdout)["diagnostics"]) == len(expected)


def test_facts_prints_the_generated_reference() -> None:
    assert run("facts").stdout == reference_markdown()
    doc = json.loads(run("facts", "--json").stdout)
    assert [f["path"] for f in doc["facts"]] == [f.path for f in fact_paths()]
    assert all(f["type"] and f["meaning"] for f in doc["facts"])
