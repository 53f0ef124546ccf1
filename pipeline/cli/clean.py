"""``pipeline clean``: remove from the output folder what no cook would write."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import (
    EXIT_OK,
    cache_option,
    display_path,
    echo_json,
    guarded,
    materials_option,
    output_options,
    rules_option,
    verbosity,
)


@click.command("clean")
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "-o", type=click.Path(file_okay=False), default="build", show_default=True,
              help="Output folder a cook of WORLD writes to.")
@cache_option
@rules_option
@materials_option
@click.option("--json", "as_json", is_flag=True, help="Print the removed files as one JSON document.")
@output_options
@guarded
def command(world, out, cache, rules, materials, as_json):
    """Remove from --out the outputs of chunks and levels WORLD no longer has.

    Removes chunk indexes of chunks that were deleted or renamed, level manifests
    of levels that are gone, per-chunk paks of earlier output formats and temp
    files left by killed cooks, then drops from shaders.pak the blobs no chunk
    index names any more.  Files that are not pipeline outputs are left alone.
    """
    w = api.open_world(world, rules=rules, materials=materials)
    result = api.clean(w, out=out, cache=cache)
    if as_json:
        echo_json(result.to_json())
    else:
        if verbosity() >= 0:
            for path in result.removed:
                click.echo(f"removed {display_path(path)}")
        click.echo(f"removed {len(result.removed)} files no cook of {display_path(world)} would write")
    return EXIT_OK
