"""Shared pieces of the CLI: error rendering and exit codes."""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import sys
import traceback
import warnings
from pathlib import Path

import click

from pipeline import interrupt
from pipeline.errors import MAX_NAME, Diagnostic, PipelineError, canonical_folder, one_line  # noqa: F401  (one_line re-exported)
from pipeline.report.render import render_json
from pipeline.structs import replace

EXIT_OK, EXIT_USER, EXIT_BUG = 0, 1, 2
EXIT_INTERRUPTED = 130    # 128 + SIGINT
EXIT_BROKEN_PIPE = 141    # 128 + SIGPIPE, what a shell reports for a tool killed by it

# The options every world command shares (one definition, one help text).
rules_option = click.option("--rules", type=click.Path(exists=True, file_okay=False),
                            help="Rule sets folder [default: pipeline.toml's, else the built-in rules/].")
materials_option = click.option("--materials", type=click.Path(exists=True, file_okay=False),
                                help="Shader library folder [default: pipeline.toml's, else the built-in materials/].")
jobs_option = click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                           help="Compile workers [default: all cores].")
cache_option = click.option("--cache", type=click.Path(file_okay=False), envvar="PIPELINE_CACHE",
                            help="Cache folder [default: ./cache, or $PIPELINE_CACHE].")




# -q/--quiet, -v/--verbose and --color on every command: kept in the click context's meta.
def _store(name):
    def callback(ctx: click.Context, param, value):
        if name == "color":
            ctx.color = {"always": True, "never": False}.get(value, False if os.environ.get("NO_COLOR") else None)
        ctx.meta[f"pipeline.{name}"] = value
        return value
    return callback


def output_options(fn):
    """Add ``-v/--verbose``, ``--color`` and (unless the command has its own) ``-q/--quiet``."""
    names = {p.name for p in getattr(fn, "__click_params__", [])}
    fn = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
                      expose_value=False, callback=_store("color"), is_eager=True,
                      help="Colour in messages: auto (on a terminal, unless NO_COLOR is set), always, never.")(fn)
    fn = click.option("--verbose", "-v", count=True, expose_value=False, callback=_store("verbose"),
                      help="More detail (repeat for more).")(fn)
    if "quiet" not in names:
        fn = click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=_store("quiet"),
                          help="Only errors and the result; no progress or summaries.")(fn)
    return fn


def verbosity(quiet: bool = False) -> int:
    """-1 with --quiet, else the number of -v given (0 by default)."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx else {}
    if quiet or meta.get("pipeline.quiet"):
        return -1
    return int(meta.get("pipeline.verbose") or 0)


def styled(text: str, **style) -> str:
    """``text`` with ANSI style; click.echo drops it where colour is off."""
    return click.style(text, **style)


def display_path(path: str, root: Path | str | None = None) -> str:
    """A path for a message: relative to the current folder when inside it, else absolute
    (``root`` resolves relative ones).  Paths inside the package are canonical (absolute, or
    from the world's root); this is where they become what a user reads."""
    if not path or path == "?":
        return path
    full = Path(path) if Path(path).is_absolute() or root is None else Path(root) / path
    # abspath, not resolve: the file may be a dangling link or a link loop (that is what the message is about)
    full, here = Path(os.path.abspath(full)), Path(os.path.abspath(Path.cwd()))
    try:
        return full.relative_to(here).as_posix()
    except ValueError:  # outside the current folder: the whole path, as shader errors show it
        return str(full)


def display_text(text: str) -> str:
    """A message with the canonical paths it names (``... of /home/me/game/materials/v.glsl:2``)
    shown as :func:`display_path` shows a location: relative to the current folder when inside it."""
    here = Path(os.path.abspath(Path.cwd())).as_posix().rstrip("/") + "/"
    if here == "/" or here not in text:
        return text
    return re.sub(rf"(?<![\w.~/-]){re.escape(here)}(?=[^\s/])", "", text)


def shown_document(doc: dict, root: Path | str | None = None) -> dict:
    """A command's JSON document as the user reads it: the canonical file of each error (``errors``,
    ``failures``) and the paths in their messages as :func:`display_path` and :func:`display_text` show
    them (files named from the world's root are kept as they are); a warning about a file of the world
    ``root``, which names it canonically, starts with its path as :func:`display_path` shows it."""
    shown = dict(doc)
    for field in ("errors", "failures"):
        if isinstance(doc.get(field), list):
            shown[field] = [_shown_error(e) if isinstance(e, dict) else e for e in doc[field]]
    if root is not None and isinstance(doc.get("warnings"), list):
        shown["warnings"] = [_shown_warning(w, canonical_folder(root)) for w in doc["warnings"]]
    return shown


def _shown_warning(warning, folder: str):
    if not isinstance(warning, str) or not warning.startswith(folder) or ": " not in warning:
        return warning
    path, rest = warning.split(": ", 1)
    return f"{display_path(path)}: {rest}"


def _shown_error(error: dict) -> dict:
    file, message = error.get("file"), error.get("message")
    shown = dict(error)
    if isinstance(file, str) and file and Path(file).is_absolute():
        shown["file"] = display_path(file)
    if isinstance(message, str):
        shown["message"] = display_text(message)
    return shown


def key_name(text: str | None, digest: str | None, full: bool = False) -> str:
    """``pbr/forward 1a2b3c4d5e6f`` (shader/pass and hash prefix), or the whole key text with -v."""
    if not text:
        return "?"
    if full or not digest:
        return text
    return f"{text.partition('{')[0]} {digest[:12]}"


JSON_FORMAT = 1  # the "format" of a command's JSON document that does not carry its own (docs/formats.md)


def versioned(document: dict) -> dict:
    """``document`` with a ``format`` field: its own (the report's), else :data:`JSON_FORMAT`."""
    return document if "format" in document else {"format": JSON_FORMAT} | document


def echo_json(document: dict) -> None:
    """Print one JSON document on stdout (sorted keys, indented, UTF-8), with its ``format`` version."""
    sys.stdout.write(render_json(versioned(document)))


def echo_diagnostics(diagnostics: list[Diagnostic], root: Path | str | None = None, canonical: bool = False) -> None:
    """Located lines on stderr; a file named from the world ``root`` (or by a canonical path, with
    ``canonical``) is shown relative to the current folder, an argument of the library call by its
    option (``--chunk: error: ...``)."""
    for d in diagnostics:
        click.echo(color_severity(str(relocated(as_option(d), root, canonical))), err=True)


def option_name(argument: str) -> str:
    """The command-line option that gives a library argument its value: ``what_if`` -> ``--what-if``."""
    return "--" + argument.replace("_", "-")


def as_option(d: Diagnostic) -> Diagnostic:
    """``d`` with a location at a library argument (``chunk``) named as the option that set it (``--chunk``)."""
    if not d.location.parameter:
        return d
    return replace(d, location=replace(d.location, file=option_name(d.location.file), parameter=False))


def relocated(d: Diagnostic, root: Path | str | None, canonical: bool = False) -> Diagnostic:
    """``d`` with its file as :func:`display_path` names it: from the world ``root`` when it is there,
    else a relative path from the current folder (``world/../rules`` -> ``rules``); an absolute path
    is kept unless ``canonical`` (the diagnostic names files by canonical paths: shader errors), and
    so is a name that is no existing file (``--level``, a URL).  With ``canonical`` the paths its
    message names are shown the same way (:func:`display_text`)."""
    file = d.location.file
    if d.location.parameter:
        return d
    if canonical and display_text(d.message) != d.message:
        d = replace(d, message=display_text(d.message))
    if not file or "://" in file:
        return d
    if root is not None and not Path(file).is_absolute() and (Path(root) / file).exists():
        shown = display_path(file, root)
    elif (canonical and Path(file).is_absolute()) or (not Path(file).is_absolute() and os.path.lexists(file)):
        shown = display_path(file)
    else:
        return d
    return replace(d, location=replace(d.location, file=shown))


def color_severity(line: str) -> str:
    """``path: error: ...`` with the severity word coloured (shown only where colour is on)."""
    for word, colour in (("error", "red"), ("warning", "yellow")):
        mark = f": {word}: "
        if mark in line:
            head, tail = line.split(mark, 1)
            return f"{head}: {styled(word + ':', fg=colour, bold=True)} {tail}"
    return line


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
    interrupt.finishing()
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
            interrupt.finishing()
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        except PipelineError as exc:
            echo_diagnostics(exc.diagnostics, canonical=exc.canonical_paths)
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
