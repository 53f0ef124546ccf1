"""``pipeline watch``: recook the chunks whose files change, in one warm process."""

from __future__ import annotations

import json
import logging
import sys

import click

from pipeline.cli._common import (
    EXIT_OK,
    as_option,
    cache_option,
    color_severity,
    guarded,
    jobs_option,
    materials_option,
    output_options,
    rules_option,
    relocated,
    verbosity,
    versioned,
)
from pipeline.cli.cook import _located
from pipeline.errors import CookDiagnostic


@click.command("watch")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.option("--chunk", "-c", metavar="C", help="Watch and cook only this chunk (e.g. forest/c03).")
@cache_option
@click.option("--out", "-o", type=click.Path(file_okay=False), default="build", show_default=True,
              help="Output folder (as for pipeline cook).")
@jobs_option
@rules_option
@materials_option
@click.option("--json", "as_json", is_flag=True, help="One JSON document per recook (a line each) on stdout.")
@guarded
def command(world, chunk, cache, out, jobs, rules, materials, as_json):
    """Cook WORLD, then recook the chunks whose files change, until Ctrl-C.

    One process stays warm (rule sets loaded, scan records open): a saved glTF file
    is scanned again and only its chunk is recooked; a changed rule set, shader or
    pipeline.toml recooks the whole world (or --chunk).  One line per recook:

    \b
      forest/c03: rocks.gltf changed -> 2 new keys, 3 jobs compiled, 0.21 s

    Bad input is reported as located errors and the loop goes on.  Outputs are the
    same as `pipeline cook` writes.
    """
    from pipeline.watch import Watcher

    logging.getLogger("watchfiles").setLevel(logging.ERROR)  # its own Ctrl-C notice: we print ours
    watcher = Watcher(world, chunk=chunk, out=out, cache=cache, jobs=jobs, rules=rules, materials=materials)

    def report(recook) -> None:
        lines = _lines(recook)
        for line in lines:
            click.echo(color_severity(line), err=True)
        if as_json:
            click.echo(json.dumps({**versioned(recook.to_json()), "errors": lines}, sort_keys=True))
        else:
            click.echo(recook.line())
        sys.stdout.flush()

    def ready(roots) -> None:
        if verbosity() < 0:  # -q: the status lines only
            return
        click.echo(f"watching {', '.join(str(r) for r in roots)} (Ctrl-C to stop)", err=True)

    try:
        watcher.run(report, ready=ready)
    except KeyboardInterrupt:
        pass
    if verbosity() >= 0:
        click.echo("pipeline watch: stopped", err=True)
    return EXIT_OK


def _lines(recook) -> list[str]:
    """The recook's errors, each named exactly as `pipeline cook` names it from this folder: a cook's
    errors through the cook's own formatter (files from the world root, the keys a compile error
    breaks), a whole-run error (a rule set, pipeline.toml, an argument) as its option or its path."""
    return [_located(d.to_json(), recook.root) if isinstance(d, CookDiagnostic) else str(relocated(as_option(d), None))
            for d in recook.errors]
