"""``pipeline show``: one output file as plain, indented JSON, every reference resolved."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import EXIT_OK, echo_json, guarded, output_options


@click.command("show")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@output_options
@guarded
def command(file):
    """Print an output file of a cook as plain JSON for people.

    FILE is a chunk index (<out>/<chunk>.json), a level manifest (<out>/<level>.level.json)
    or the shader library (<out>/shaders.pak).  The shipped files are compact tables and
    positions; this prints keys by text, draws with their key and pipeline state id per
    pass, pipeline states by id, and for the library each blob's size, stage and the
    chunks using it (docs/formats.md).
    """
    echo_json(api.show(file))
    return EXIT_OK
