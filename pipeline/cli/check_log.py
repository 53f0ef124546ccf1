"""``pipeline check-log``: are the misses of a runtime miss log covered by the current cook?"""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import (
    EXIT_OK,
    EXIT_USER,
    cache_option,
    echo_json,
    guarded,
    output_options,
    rules_option,
)


@click.command("check-log")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.argument("log", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", default="build", show_default=True, type=click.Path(file_okay=False),
              help="The cooked outputs folder.")
@rules_option
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@guarded
def command(world, log, out, rules, cache, as_json):
    """Say, for each miss in LOG (written by the runtime), why it happened.

    stale: the content of WORLD requires the key now but the cook lacks it (cook
    again); cooked: the cook holds it now; runtime: the content does not require it
    (a draw or material made at run time; the rule behind each differing feature is
    named).  Exit code 1 when any miss is not covered by the current cook; an empty
    LOG (a run in which every draw found its key) says so and exits 0.
    """
    result = api.check_log(api.open_world(world, rules=rules), log, out=out, cache=cache)
    if as_json:
        echo_json(result.to_json())
    else:
        for e in result.errors:
            click.echo(f"{e.file}:{e.line}: error: {e.message}", err=True)
        for m in result.misses:
            draw = ", ".join(f"{k} {m.draw.get(k)}" for k in ("node", "mesh", "primitive", "material"))
            level = "note" if m.covered else "error"
            click.echo(f"{log}:{m.line}: {level}: {m.status}: {m.key} for {m.draw.get('file')} ({draw}) "
                       f"in {m.pass_name}: {m.reason}")
            for r in m.rules:
                click.echo(f"    {r['feature']}: logged {r['logged']}, content {r['content']} ({r['rule']})")
        doc = result.to_json()
        if not result.misses and not result.errors:
            click.echo(f"{log}: no misses: no draw was drawn through a fallback")
        else:
            click.echo(f"{len(result.misses)} misses: {doc['covered']} covered, {doc['uncovered']} not covered")
    return EXIT_OK if result.ok else EXIT_USER
