"""Shared pieces of the CLI: error rendering and exit codes."""

from __future__ import annotations

import functools
import os
import sqlite3
import sys
import traceback
import warnings

import click

from pipeline.errors import MAX_NAME, Diagnostic, PipelineError, one_line  # noqa: F401  (one_line re-exported)
from pipeline.report.render import render_json

EXIT_OK, EXIT_USER, EXIT_BUG = 0, 1, 2
EXIT_INTERRUPTED = 130    # 128 + SIGINT
EXIT_BROKEN_PIPE = 141    # 128 + SIGPIPE, what a shell reports for a tool killed by it

# The options every world command shares (one definition, one help text).
rules_option = click.option("--rules", type=click.Path(exists=True, file_okay=False),
                            help="Rule sets folder [default: pipeline.toml's, else the built-in rules/].")
materials_option = click.option("--materials", type=click.Path(exists=True, file_okay=False),
                                help="Shader library folder [default: pipeline.toml's, else the built-in materials/].")
cache_option = click.option("--cache", type=click.Path(file_okay=False), envvar="PIPELINE_CACHE",
                            help="Cache folder [default: ./cache, or $PIPELINE_CACHE].")


def echo_json(document: object) -> None:
    """Print one JSON document on stdout (sorted keys, indented, UTF-8)."""
    sys.stdout.write(render_json(document))


def echo_diagnostics(diagnostics: list[Diagnostic]) -> None:
    for d in diagnostics:
        click.echo(str(d), err=True)


def _environment_line(exc: Exception) -> str:
    if isinstance(exc, sqlite3.Error):
        return f"cache: error: {one_line(str(exc))}"
    where = one_line(str(exc.filename), MAX_NAME) if getattr(exc, "filename", None) else "pipeline"
    return f"{where}: error: {one_line(exc.strerror or str(exc))}"


def _quiet_broken_pipe() -> None:
    """Exit as a pipeline stage whose reader went away: no message, stdout closed quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    sys.exit(EXIT_BROKEN_PIPE)


def _interrupted() -> None:
    """Ctrl-C: one line, exit 130 (128 + SIGINT) as shells expect; outputs written so far are complete."""
    try:
        sys.stderr.write("pipeline: interrupted\n")
        sys.stderr.flush()
    except OSError:
        pass
    sys.exit(EXIT_INTERRUPTED)


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings (a cache entry set aside ...) as one ``warning:`` line, not a source excerpt."""
    click.echo(f"warning: {one_line(str(message))}", err=True)


def guarded(fn):
    """Run a command body: PipelineError -> located lines + exit 1; anything else -> bug, exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        warnings.showwarning = _warning_line
        try:
            code = fn(*args, **kwargs)
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        except PipelineError as exc:
            echo_diagnostics(exc.diagnostics)
            sys.exit(EXIT_USER)
        except BrokenPipeError:  # `pipeline keys ... | head`: the reader has what it wanted
            _quiet_broken_pipe()
        except KeyboardInterrupt:
            _interrupted()
        except (OSError, sqlite3.OperationalError) as exc:  # the environment: disk full, read-only, no permission
            click.echo(_environment_line(exc), err=True)
            sys.exit(EXIT_USER)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception:  # a bug: show everything
            traceback.print_exc()
            click.echo("pipeline: internal error (a bug); please report it with the traceback above", err=True)
            sys.exit(EXIT_BUG)
        sys.exit(code or EXIT_OK)

    return wrapper
