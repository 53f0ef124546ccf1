"""``pipeline verify-ship``: prove, before shipping, that no draw of WORLD can miss its key."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import EXIT_OK, EXIT_USER, cache_option, echo_json, guarded, output_options, rules_option


@click.command("verify-ship")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "-o", default="build", show_default=True, type=click.Path(file_okay=False),
              help="The cooked outputs folder.")
@rules_option
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@guarded
def command(world, out, rules, cache, as_json):
    """Prove that every draw of WORLD finds its key in the cooked outputs, for every runtime axis value.

    For each draw of the content, each pass and each allowed combination of the
    pass's runtime axes, the chunk index under --out must name the key the content
    requires, with a pipeline state, and the shader library must hold each of its
    stage blobs whole.  Each hole is one line (chunk, draw, pass, axis values: what
    is missing); exit code 1 when there is any.  No GPU is needed (`pipeline runtime
    check` creates the pipeline states).
    """
    result = api.verify_ship(api.open_world(world, rules=rules), out=out, cache=cache)
    if as_json:
        echo_json(result.to_json())
    else:
        for hole in result.holes:
            click.echo(f"{out}: error: {hole.line()}", err=True)
        verdict = "ready to ship" if result.ok else f"{len(result.holes)} hole(s)"
        click.echo(f"{out}: {verdict}: {result.draws} draws in {result.chunks} chunks, "
                   f"{result.checked} draw/pass/axis combinations checked")
    return EXIT_OK if result.ok else EXIT_USER
