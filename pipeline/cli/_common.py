"""Shared pieces of the CLI: error rendering and exit codes."""

from __future__ import annotations

import functools
import sys
import traceback

import click
import orjson

from pipeline.errors import Diagnostic, PipelineError

EXIT_OK, EXIT_USER, EXIT_BUG, EXIT_INTERRUPTED = 0, 1, 2, 130
MAX_LINE = 2000  # characters of one message line; the rest is elided


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """``text`` as one bounded line: line breaks shown as spaces, the middle of an over-long text elided."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        half = limit // 2
        text = f"{text[:half]} ... ({len(text) - limit} characters elided) ... {text[-half:]}"
    return text

# The options every world command shares (one definition, one help text).
rules_option = click.option("--rules", type=click.Path(exists=True, file_okay=False),
                            help="Rule sets folder [default: pipeline.toml's, else the built-in rules/].")
materials_option = click.option("--materials", type=click.Path(exists=True, file_okay=False),
                                help="Shader library folder [default: pipeline.toml's, else the built-in materials/].")
cache_option = click.option("--cache", type=click.Path(file_okay=False), envvar="PIPELINE_CACHE",
                            help="Cache folder [default: ./cache, or $PIPELINE_CACHE].")


def echo_json(document: object) -> None:
    """Print one JSON document on stdout (sorted keys, indented, UTF-8)."""
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")


def echo_diagnostics(diagnostics: list[Diagnostic]) -> None:
    for d in diagnostics:
        click.echo(str(d), err=True)


def guarded(fn):
    """Run a command body: PipelineError -> located lines + exit 1; anything else -> bug, exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            code = fn(*args, **kwargs)
        except PipelineError as exc:
            echo_diagnostics(exc.diagnostics)
            sys.exit(EXIT_USER)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt, SystemExit):
            raise
        except Exception:  # a bug: show everything
            traceback.print_exc()
            click.echo("pipeline: internal error (a bug); please report it with the traceback above", err=True)
            sys.exit(EXIT_BUG)
        sys.exit(code or EXIT_OK)

    return wrapper
