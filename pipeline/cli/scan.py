"""``pipeline scan PATH``: the draws and facts of a world, a chunk folder or one file."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline import api
from pipeline.cli._common import (
    output_options,
    EXIT_OK,
    EXIT_USER,
    echo_diagnostics,
    echo_json,
    guarded,
)
from pipeline.scan.scanner import ScanResult


@click.command("scan")
@output_options
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document: files, chunks, draws with facts, errors.")
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Scan cache folder (default: $PIPELINE_CACHE or ./cache).")
@click.option("--no-cache", is_flag=True, help="Read every file; neither read nor write the scan cache.")
@click.option("--level", default=None, help="Only chunks of this level.")
@click.option("--chunk", default=None, help="Only this chunk (e.g. forest/c03, or a grid cell forest/x0_z1).")
@click.option("--fact", "facts", multiple=True, metavar="PATH",
              help="Also compute an optional buffer fact (mesh.colorAllWhite, mesh.maxJointInfluences). Repeatable.")
@guarded
def command(path: Path, as_json: bool, cache_dir: Path | None, no_cache: bool, level: str | None,
            chunk: str | None, facts: tuple[str, ...]) -> int:
    """Scan glTF files into draws with typed facts.

    PATH is a world folder, a chunk folder or a single .gltf/.glb file.  A chunk
    is a folder directly holding glTF files; its level is the first component of
    its path unless pipeline.toml says otherwise.  Unchanged files are taken from
    the scan cache without being read.

    Without --json: a summary (files, chunks, draws, unique fact signatures) and
    every error as a located line, `file: /json/pointer: error: message`.
    With --json: {"files", "chunks", "draws": [{"file", "chunk", "level", "node",
    "mesh", "primitive", "material", "variant", "facts"}], "errors": [...]},
    paths relative to the world root.

    Exit status: 0 all files scanned, 1 some file had an error (the others were
    still scanned), 2 an internal error.
    """
    result = api.scan(path, cache=cache_dir, use_cache=not no_cache, level=level, chunk=chunk,
                      optional=frozenset(facts))
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(summary(result))
    echo_diagnostics(result.diagnostics, result.root)
    return EXIT_USER if result.errors else EXIT_OK


def summary(result: ScanResult) -> str:
    """A few lines: what was scanned and how much came from the cache."""
    lines = [
        f"world    {result.root}",
        f"files    {len(result.files)} ({result.files_cached} cached, {result.files_read} read, "
        f"{result.files_parsed} parsed)",
        f"chunks   {len(result.chunks)}",
        f"draws    {len(result.draws)}",
        f"unique   {result.unique_signatures} fact signatures",
    ]
    if result.diagnostics:
        lines.append(f"problems {len(result.errors)} errors, {len(result.warnings)} warnings (below)")
    return "\n".join(lines)
