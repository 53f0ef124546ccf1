"""The ``pipeline`` command line: thin commands over :mod:`pipeline.api`.

Each sub-command lives in its own module of this package and only parses options
and renders results.  Exit codes: 0 all good, 1 user-facing errors (located, the
rest still done), 2 a bug.
"""

from __future__ import annotations

import click

from pipeline import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


def _register() -> None:
    import importlib
    import pkgutil

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        command = getattr(module, "command", None)
        if command is not None:
            main.add_command(command)


_register()
