"""``pipeline verify-family``: compile a family's valid key space (all of it or a sample)."""

from __future__ import annotations

import click

from pipeline import api
from pipeline.cli._common import (
    output_options,
    EXIT_OK,
    EXIT_USER,
    cache_option,
    display_path,
    display_text,
    echo_json,
    guarded,
    jobs_option,
    materials_option,
    rules_option,
    shown_document,
)
from pipeline.cook.error_docs import breaks
from pipeline.cook.verify import VerifyOptions, VerifyResult, find_family, verify_family
from pipeline.cpus import usable_cpus
from pipeline.errors import Location
from pipeline.progress import for_stream
from pipeline.rules.load import load_rulesets


@click.command("verify-family")
@output_options
@click.argument("family")
@click.option("--all", "every", is_flag=True, help="Check every valid key (may be millions for big families).")
@click.option("--sample", type=click.IntRange(min=1), default=100, show_default=True, metavar="N",
              help="Check N keys per pass, drawn with --seed (ignored with --all).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample.")
@click.option("--world", type=click.Path(exists=True, file_okay=False), default=".", show_default=True,
              help="The world whose rule sets, shader library, allowed_roots and [cook] settings to use "
                   "(pipeline.toml at or above the folder; without one, the built-in rules and materials).")
@rules_option
@materials_option
@cache_option
@jobs_option
@click.option("--backend", type=click.Choice(["capi", "cli", "auto"]), default="capi", show_default=True,
              help="capi: glslang in-process; cli: one glslangValidator per job.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary document on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@guarded
def command(family, every, sample, seed, world, rules, materials, cache, jobs, backend, as_json, quiet):
    """Compile FAMILY's valid permutation keys and report every one that fails.

    The keys come from the rule set (every valid canonical key of each pass, or
    a seeded sample), not from content, so a combination no asset uses yet is
    checked too.  Jobs go through the cache like a cook's: a rerun compiles
    nothing, and a remembered failure is reported again.  Exit code 1 when any
    job fails.
    """
    w = api.open_world(world, rules=rules, materials=materials)
    ruleset = find_family(w.rulesets, family)
    options = VerifyOptions(sample=None if every else sample, seed=seed, jobs=jobs or usable_cpus(),
                            backend=backend)
    progress = for_stream(quiet=quiet or as_json)
    with api.open_store(cache) as store:
        result = verify_family(w, ruleset, store, options, progress=progress)
    _failures(result)  # on stderr, with --json too
    if as_json:
        echo_json(shown_document(result.to_json()))
    else:
        _render(result)
    return EXIT_OK if result.ok else EXIT_USER


def _failures(result: VerifyResult) -> None:
    for failure in result.failures:
        where = Location(display_path(failure["file"]), failure["line"], failure["col"])
        click.echo(f"{where}: error: {display_text(failure['message'])}{breaks(failure)} [{', '.join(failure['stages'])}]",
                   err=True)


def _render(result: VerifyResult) -> None:
    doc = result.to_json()
    for name, counts in doc["passes"].items():
        click.echo(f"{doc['family']}/{name}: {counts['checked']} of {counts['valid']} valid keys checked")
    stages = ", ".join(f"{stage} {s['uses']}->{s['jobs']}" for stage, s in doc["stages"].items())
    verdict = "ok" if result.ok else f"{doc['failed_jobs']} jobs FAILED"
    click.echo(f"verified {doc['family']}: {doc['keys']} keys -> {doc['jobs']} unique jobs ({stages}); "
               f"{doc['compiled']} compiled, {doc['cache_hits']} cached; {verdict}")
