"""The ``pipeline`` command line: thin commands over :mod:`pipeline.api`.

Each sub-command lives in its own module of this package (module ``cook`` holds
``pipeline cook``) and only parses options and renders results.  A sub-command's
module is imported when that sub-command runs (or when ``--help`` lists them), so
``pipeline cook`` does not pay for the imports of ``pipeline report``.  Exit codes:
0 all good, 1 user-facing errors (located, the rest still done), 2 a bug.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import click

from pipeline import __version__
from pipeline.cli._common import EXIT_INTERRUPTED, EXIT_USER, one_line


class LazyGroup(click.Group):
    """A group whose sub-commands are the ``command`` objects of this package's modules, loaded on use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._load_all()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in _module_names():
            command = self._load(cmd_name)
        if command is None or command.name != cmd_name:
            command = self._load_all().get(cmd_name)  # a module whose command has another name
        return command

    def main(self, *args, **kwargs):
        """Run, rendering a usage error (bad option, missing path) as one line with exit code 1."""
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            context = f"{exc.ctx.command_path}: " if getattr(exc, "ctx", None) else "pipeline: "
            hint = f" (see '{exc.ctx.command_path} --help')" if isinstance(exc, click.UsageError) and exc.ctx else ""
            click.echo(f"{context}error: {one_line(exc.format_message())}{hint}", err=True)
            sys.exit(EXIT_USER)
        except click.exceptions.Abort:
            click.echo("pipeline: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)

    def _load(self, module_name: str) -> click.Command | None:
        command = getattr(importlib.import_module(f"{__name__}.{module_name}"), "command", None)
        if command is not None:
            self.add_command(command)
        return command

    def _load_all(self) -> dict[str, click.Command]:
        for name in _module_names():
            self._load(name)
        return dict(self.commands)


def _module_names() -> list[str]:
    return sorted(i.name for i in pkgutil.iter_modules(__path__) if not i.name.startswith("_"))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="pipeline")
def main() -> None:
    """Cook only the shader permutations your glTF content uses.

    \b
    Typical use:
      pipeline scan WORLD            what draws the content has
      pipeline keys WORLD            which permutation keys they need
      pipeline cook WORLD            compile those keys to SPIR-V (cached)
      pipeline report WORLD          possible -> valid -> required -> compiled
      pipeline explain WORLD KEY     why one key exists
    """
