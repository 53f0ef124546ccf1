"""``pipeline rules``: load and lint rule sets."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import EXIT_OK, EXIT_USER, echo_diagnostics, echo_json, guarded, output_options


@click.group("rules")
def command() -> None:
    """Work with rule sets (rules/<shader>.yaml)."""


@command.command("check")
@output_options
@click.option("--rules", "rules_dir", type=click.Path(file_okay=False),
              help="Rule sets folder [default: the built-in rules].")
@click.option("--materials", type=click.Path(exists=True, file_okay=False),
              help="Also check that every stage source exists in this shader library.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document on stdout: rule sets, passes, counts and every problem.")
@guarded
def check(rules_dir, materials, as_json):
    """Load and lint every rule set; print located problems and exit 1 if any.

    \b
    Checks: YAML and schema, unknown facts and features, values outside a
    feature's domain, normalize cycles, features never derived, normalize rules
    that can never fire or never change anything, static features no pass reads.
    With --json the problems are also in the document on stdout; the exit code
    is the same.
    """
    report = api.check_rules(rules_dir, materials=materials)
    echo_diagnostics(report.diagnostics)
    if as_json:
        echo_json(report.to_json())
        return EXIT_USER if report.errors else EXIT_OK
    if report.errors:
        click.echo(f"{len(report.errors)} error(s) in {report.folder}", err=True)
        return EXIT_USER
    click.echo(f"rules OK: {report.summary()}")
    return EXIT_OK


@command.command("facts")
@output_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document: facts, a list of {path, type, meaning}.")
@guarded
def facts(as_json):
    """Print every fact path a rule expression can read, with its type and meaning.

    Generated from the fact models the expressions are checked against; mappings
    show their entries as ``[name]`` (``mesh.attributes[name].type``).
    """
    from pipeline.rules.fact_reference import fact_paths, reference_markdown
    if as_json:
        echo_json({"facts": [{"path": f.path, "type": f.type, "meaning": f.description} for f in fact_paths()]})
    else:
        click.echo(reference_markdown(), nl=False)
    return EXIT_OK
