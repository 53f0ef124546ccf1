"""The ``pipeline`` command line: thin commands over :mod:`pipeline.api`.

Each sub-command lives in its own module of this package (module ``cook`` holds
``pipeline cook``) and only parses options and renders results.  A sub-command's
module is imported when that sub-command runs (or when ``--help`` lists them), so
``pipeline cook`` does not pay for the imports of ``pipeline report``.  Exit codes:
0 all good, 1 user-facing errors (located, the rest still done), 2 a bug.
"""

from __future__ import annotations

import importlib
import sys

import click

from pipeline import __version__

# Every sub-command: name -> (module of this package, first paragraph of its help).  ``--help``
# lists them from here without importing a module; tests/unit/cli/test_package.py checks this table
# against the commands themselves.
COMMANDS: dict[str, tuple[str, str]] = {
    "cache": ("cache", "Inspect and clean the local cache and the shared cache tier."),
    "check-log": ("check_log", "Say, for each miss in LOG (written by the runtime), why it happened."),
    "clean": ("clean", "Remove from --out the outputs of chunks and levels WORLD no longer has."),
    "cook": ("cook", "Compile the permutations WORLD requires into per-chunk SPIR-V outputs."),
    "explain": ("explain", "Explain why KEY exists in WORLD."),
    "keys": ("keys", "List the permutation keys the draws of WORLD need, with how many draws need each."),
    "report": ("report", "Report the permutation funnel of WORLD: possible -> valid -> required -> unique "
                         "sources -> unique binaries, per shader family and pass, level and chunk."),
    "rules": ("rules", "Work with rule sets (rules/<shader>.yaml)."),
    "runtime": ("runtime", "Load cooked outputs on a Vulkan driver (Mesa lavapipe without a GPU), and each other "
                           "target by its client."),
    "scan": ("scan", "Scan glTF files into draws with typed facts."),
    "show": ("show", "Print an output file of a cook as plain JSON for people."),
    "verify-ship": ("ship", "Prove that every draw of WORLD finds its key in the cooked outputs, for every "
                            "runtime axis value."),
    "verify-family": ("verify", "Compile FAMILY's valid permutation keys and report every one that fails."),
    "watch": ("watch", "Cook WORLD, then recook the chunks whose files change, until Ctrl-C."),
}


class LazyGroup(click.Group):
    """A group whose sub-commands are the ``command`` objects of this package's modules, loaded on use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            command = self._load(COMMANDS[cmd_name][0])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMANDS`, as click would render the loaded commands."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, args=None, *rest, **kwargs):
        """Run, rendering a usage error (bad option, missing path) as one line with exit code 1.

        ``pipeline cook`` whose inputs and outputs did not change since its last clean run
        is answered from its stamp (:mod:`pipeline.cook.noop`) before anything else loads.
        """
        argv = list(sys.argv[1:] if args is None else args)
        checked = kwargs.pop("stamp_checked", False)  # python -m pipeline asked the stamp already
        if argv[:1] == ["cook"] and not checked:
            from pipeline.cook.noop import fast_cook

            code = fast_cook(argv[1:])
            if code is not None:
                sys.exit(code)
        try:
            return super().main(args, *rest, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            from pipeline.cli._common import EXIT_USER, one_line

            context = f"{exc.ctx.command_path}: " if getattr(exc, "ctx", None) else "pipeline: "
            hint = f" (see '{exc.ctx.command_path} --help')" if isinstance(exc, click.UsageError) and exc.ctx else ""
            click.echo(f"{context}error: {one_line(exc.format_message())}{hint}", err=True)
            sys.exit(EXIT_USER)
        except click.exceptions.Abort:
            from pipeline.cli._common import EXIT_INTERRUPTED

            click.echo("pipeline: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        finally:
            if argv[:1] == ["cook"]:
                from pipeline.cook.noop import drop_walks

                drop_walks()  # a missed stamp check's walk is good for this command only

    def _load(self, module_name: str) -> click.Command | None:
        command = getattr(importlib.import_module(f"{__name__}.{module_name}"), "command", None)
        if command is not None:
            self.add_command(command)
        return command


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
