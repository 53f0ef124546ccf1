"""report.errors: the report's user errors (a what-if, an --since file), shown as located lines with exit 1."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from rules_fixtures import small_ruleset

from pipeline.cli._common import EXIT_USER, guarded
from pipeline.errors import ConfigError, Diagnostic, Location, PipelineError, RuleError
from pipeline.report import funnel
from pipeline.report.errors import ReportError
from pipeline.report.since import since_diff
from pipeline.report.whatif import resolve_overrides


def test_a_report_error_is_its_own_kind_of_user_error() -> None:
    assert issubclass(ReportError, PipelineError)
    assert not issubclass(ReportError, (RuleError, ConfigError))  # a report option, not the content
    assert funnel.ReportError is ReportError  # one class, whichever module it is taken from


def test_every_diagnostic_is_kept_and_shown_as_its_located_line() -> None:
    first = Diagnostic(Location("old.json", pointer="/keys"), "not a list of keys")
    second = Diagnostic(Location("old.json", 3, 7), "not JSON")
    error = ReportError([first, second])
    assert error.diagnostics == [first, second]
    assert str(error).splitlines() == ["old.json: /keys: error: not a list of keys", "old.json:3:7: error: not JSON"]
    (only,) = ReportError.at("new.json", "missing", line=2).diagnostics
    assert (only.file, only.line, only.message) == ("new.json", 2, "missing")


def test_a_bad_what_if_is_a_report_error_at_its_argument() -> None:
    families = {"t": small_ruleset({"A": {"type": "bool"}}, derive={"A": "material.unlit"})}
    with pytest.raises(ReportError) as info:
        resolve_overrides(families, {"t.A": "sometimes"})
    (d,) = info.value.diagnostics
    assert d.location == Location.argument("what_if") and d.message == "t.A=sometimes: expected dynamic, removed or only:VALUE,... (a runtime axis)"


def test_a_missing_since_file_is_a_report_error_naming_it(tmp_path) -> None:
    path = tmp_path / "earlier.json"
    with pytest.raises(ReportError) as info:
        since_diff(path, [])
    assert [d.file for d in info.value.diagnostics] == [str(path)]


@pytest.mark.parametrize("location, shown", [
    (Location.argument("what_if"), "--what-if: error: A=x: expected dynamic or removed"),
    (Location("old.json", pointer="/keys"), "old.json: /keys: error: A=x: expected dynamic or removed"),
])
def test_a_command_shows_it_as_one_line_and_exits_1(location, shown) -> None:
    @click.command()
    @guarded
    def report() -> None:
        raise ReportError(Diagnostic(location, "A=x: expected dynamic or removed"))

    result = CliRunner().invoke(report, [])
    assert result.exit_code == EXIT_USER
    assert result.stderr == shown + "\n" and result.stdout == ""
