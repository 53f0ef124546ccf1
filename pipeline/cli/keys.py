"""``pipeline keys``: the permutation keys a world's content requires."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import (
    output_options,
    EXIT_OK,
    EXIT_USER,
    cache_option,
    echo_diagnostics,
    echo_json,
    guarded,
    materials_option,
    rules_option,
)


@click.command("keys")
@output_options
@click.argument("world", type=click.Path(exists=True))
@click.option("--level", "-l", metavar="L", help="Only this level.")
@click.option("--chunk", "-c", metavar="C", help="Only this chunk (e.g. forest/c03).")
@rules_option
@materials_option
@cache_option
@click.option("--defines", "with_defines", is_flag=True,
              help="Also print each key's exact #define list: the whole preamble, then what each stage keeps, "
                   "in the order the preamble writes them.")
@click.option("--transformed", is_flag=True,
              help="Also print each stage's text after its family's source transform plug-ins (families that "
                   "have some), as the stage's jobs compile it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@guarded
def command(world, level, chunk, rules, materials, cache, with_defines, transformed, as_json):
    """List the permutation keys the draws of WORLD need, with how many draws need each.

    Rules run once per distinct fact signature.  A located error (bad glTF, a rule
    that fails on some draw) is printed and the exit code is 1; every other draw
    still produces its keys.
    """
    opened = api.open_world(world, rules=rules, materials=materials)
    result = api.keys(opened, level=level, chunk=chunk, cache=cache, defines=with_defines)
    texts = api.transformed_texts(opened, result) if transformed else {}
    errors = [d for d in result.diagnostics if d.severity == "error"]
    echo_diagnostics(result.diagnostics, result.scan.root)
    if as_json:
        doc = result.to_json()
        if transformed:
            doc["keys"] = [k | {"transformed": texts.get(k["key"], {})} for k in doc["keys"]]
        echo_json(doc)
    else:
        _render(result, texts)
    return EXIT_USER if errors else EXIT_OK


def _render(result: api.KeysResult, texts: dict[str, dict[str, str]]) -> None:
    required = result.required
    for key, info in required.sorted():
        click.echo(f"{key.hash[:12]}  {len(info.draws):6d} draws  {key.text}")
        for part, defines in (result.defines or {}).get(key.text, {}).items():
            shown = " ".join(f"{name}={value}" for name, value in defines) or "(none)"
            click.echo(f"    {part + ':':10s} {shown}")
        for stage, text in texts.get(key.text, {}).items():
            click.echo(f"    {stage} text:")
            for line in text.splitlines():
                click.echo(f"        {line}")
    click.echo(f"{len(required.keys)} keys for {len(result.scan.draws)} draws "
               f"({required.signatures_evaluated} distinct fact signatures evaluated)")
