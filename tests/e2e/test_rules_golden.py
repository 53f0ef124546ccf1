"""Golden failing rule sets: one folder per mistake, with the exact expected lines.

Each folder of tests/golden/rules holds ``rules/*.yaml`` (and ``materials/`` when
the case is about sources) and ``expected.txt``: every diagnostic that
``pipeline rules check`` prints for it, in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.rules.lint import lint_rules
from paths import TESTS

GOLDEN = TESTS / "golden" / "rules"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


def test_there_are_at_least_fifteen_kinds_of_mistakes():
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES)
def test_golden_rule_set_fails_with_the_expected_lines(case, monkeypatch):
    folder = GOLDEN / case
    monkeypatch.chdir(folder)
    materials = Path("materials")
    report = lint_rules(Path("rules"), materials_dir=materials if materials.is_dir() else None)
    got = "".join(f"{d}\n" for d in report.diagnostics)
    assert got == (folder / "expected.txt").read_text(encoding="utf-8")
    assert report.errors


@pytest.mark.parametrize("case", ["unknown_fact", "normalize_cycle", "never_derived"])
def test_rules_check_prints_located_lines_and_exits_1(case, monkeypatch):
    folder = GOLDEN / case
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["rules", "check", "--rules", "rules"])
    assert result.exit_code == 1
    assert (folder / "expected.txt").read_text(encoding="utf-8").splitlines()[0] in result.output
