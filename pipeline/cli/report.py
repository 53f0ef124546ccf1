"""``pipeline report``: what the content costs, from possible keys down to compiled binaries."""

from __future__ import annotations

import os
import sys

import click

from pipeline import api
from pipeline.cli._common import (
    EXIT_OK,
    EXIT_USER,
    cache_option,
    echo_diagnostics,
    echo_json,
    guarded,
    key_name,
    materials_option,
    output_options,
    rules_option,
    styled,
    verbosity,
)
from pipeline.outputs.atomic import write_atomic
from pipeline.cook.timings import MAX_COOKS
from pipeline.report.html import render_html
from pipeline.report.render import render

FORMATS = ("table", "json", "csv", "html")


def _what_if(ctx, param, values) -> dict[str, str]:
    out = {}
    for item in values:
        name, sep, how = item.partition("=")
        if not sep or (how not in ("dynamic", "removed") and not how.startswith("only:")) or not name:
            raise click.BadParameter(f"'{item}': expected FAMILY.FEATURE=dynamic, FAMILY.FEATURE=removed or "
                                     "FAMILY.AXIS=only:VALUE,... (the family may be left out when only one has "
                                     "the feature)", ctx, param)
        out[name] = how
    return out


@click.command("report")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.option("--level", "-l", metavar="L", help="Only this level.")
@click.option("--chunk", "-c", metavar="C", help="Only this chunk (e.g. forest/c03).")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table: for people; json: for tools and --since; csv: for spreadsheets; "
                   "html: one self-contained page with charts.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE [default: stdout].")
@click.option("--what-if", "what_if", multiple=True, metavar="FAMILY.FEATURE=dynamic|removed", callback=_what_if,
              help="Also show the funnel as if a feature of one family (pbr.INSTANCING, as the report names "
                   "it) were a runtime branch (dynamic) or gone (removed). A bare FEATURE names the one family "
                   "that has it. A runtime axis may be restricted: pbr.QUALITY=only:HIGH. Repeatable.")
@click.option("--budget", type=click.IntRange(min=0), metavar="N",
              help="Exit 1 when the selection needs more than N keys, naming what pushed it over. "
                   "Levels may also set [levels.NAME] budget in pipeline.toml.")
@click.option("--since", type=click.Path(exists=True, dir_okay=False), metavar="OLD.json",
              help="Show the keys added and removed since an earlier --format json report, and the files "
                   "that brought them.")
@rules_option
@materials_option
@cache_option
@click.option("--out", type=click.Path(exists=True, file_okay=False),
              help="The cooked outputs folder (as given to pipeline cook): the total binary size of a report of "
                   "the whole world is its shaders.pak on disk [default: build, when it exists].")
@click.option("--backend", type=click.Choice(["capi", "cli", "auto"]), default="capi", show_default=True,
              help="The compiler whose cached binaries to count (as given to pipeline cook).")
@click.option("--history", type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Earlier --format json reports: the page charts required keys, binaries and bytes per build.")
@click.option("--platform", "platforms", multiple=True, metavar="NAME",
              help="Plan only these platforms' targets, as `cook --platform` does (repeatable) [default: all].")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--timings", is_flag=True,
              help="Show the slowest compile jobs and families of the last cook (from the timing log in the "
                   "cache) instead of the funnel; with --json, as one JSON document.")
@click.option("--cooks", type=click.IntRange(min=1), metavar="N",
              help="With --timings: the last N cooks of the timing log together (per job: runs, last, mean and "
                   "max time; per family: totals) [default: 1].")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Jobs listed by --timings.")
@guarded
def command(world, level, chunk, fmt, output, what_if, budget, since, rules, materials, cache, out, backend, history,
            platforms, as_json, timings, cooks, top):
    """Report the permutation funnel of WORLD: possible -> valid -> required -> unique
    sources -> unique binaries, per shader family and pass, level and chunk.

    \b
      possible         product of the static feature domains a pass reads
      valid            distinct keys left after the normalize rules
      required         keys the scanned draws actually need
      unique sources   stage compile jobs after per-stage define projection
      unique binaries  distinct SPIR-V blobs in the cache (once cooked)
      pso              distinct vertex blob + fragment blob + render state

    With several compile targets (pipeline.toml [platforms], [cook.compile] or a rule
    set's compile:) the funnel, binaries and bytes are also shown per target.

    Needs only the scan and the rule sets; compile figures are added when the cache
    holds them (run pipeline cook first).  Also lists the keys each level and chunk
    needs alone, the features that multiply the count most, and the files and
    materials that add keys nothing else needs.

    Exit code 1 when a budget is exceeded (or a file could not be read); the report
    is still written.
    """
    if cooks is not None and not timings:
        raise click.BadParameter("needs --timings", param_hint="--cooks")
    fmt = "json" if as_json else fmt
    w = api.open_world(world, rules=rules, materials=materials)
    if timings:
        return _timings(api.timings(w, cache=cache, top=top, cooks=cooks or 1), fmt)
    result = api.report(w, level=level, chunk=chunk, cache=cache, what_if=what_if, budget=budget, since=since,
                        backend=backend, history=history, out=out or ("build" if os.path.isdir("build") else None),
                        platform=platforms)
    doc = result.to_json()
    text = render_html(doc) if fmt == "html" else render(doc, fmt)
    if output:
        write_atomic(output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    echo_diagnostics(result.diagnostics, result.world, canonical=True)  # a shader file by its canonical path
    if result.since is not None and result.since.warning:
        click.echo(f"{since}: {styled('warning:', fg='yellow', bold=True)} {result.since.warning}", err=True)
    for check in result.over_budget:
        click.echo(f"{check.origin}: error: budget: {check.message()}", err=True)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    return EXIT_USER if errors or result.over_budget else EXIT_OK


def _timings(summary, fmt: str) -> int:
    """The timing log's last cook (or last N cooks): the cooks, the slowest jobs, then families by total time."""
    if fmt == "json":
        echo_json(summary.to_json())
        return EXIT_OK
    if summary.cook is None:
        click.echo("no compile has been timed yet: run pipeline cook (with this --cache) first")
        return EXIT_OK
    several = len(summary.cooks) > 1
    kept = f"timing log: {summary.cooks_logged} cook{_s(summary.cooks_logged)}, keeps the last {MAX_COOKS}"
    if several:
        click.echo(f"last {len(summary.cooks)} cooks ({kept}): {summary.total_runs} compile{_s(summary.total_runs)} "
                   f"in {summary.total_seconds:.3f} s")
        for cook in summary.cooks:
            click.echo(f"  {cook['cook']}  {cook['jobs']:6d} {'job' + _s(cook['jobs']):<4}  {cook['seconds']:9.3f} s")
        click.echo("slowest jobs (by mean time):")
        click.echo(f"  {'mean':>11}  {'last':>11}  {'max':>11}  runs  job")
    else:
        click.echo(f"last cook {summary.cook}: {summary.total_runs} job{_s(summary.total_runs)} compiled in "
                   f"{summary.total_seconds:.3f} s ({kept})")
        click.echo("slowest jobs:")
    for job in summary.jobs:
        name = key_name(job["key"], job.get("key_hash"), verbosity() > 0)
        what = f"{job['source']} [{job['stage']}] for {name}"
        if several:
            click.echo(f"  {job['mean_seconds']:9.4f} s  {job['last_seconds']:9.4f} s  {job['max_seconds']:9.4f} s"
                       f"  {job['runs']:4d}  {what}")
        else:
            click.echo(f"  {job['last_seconds']:9.4f} s  {what}")
    click.echo("families:")
    for fam in summary.families:
        runs = f", {fam['runs']} runs" if several else ""
        click.echo(f"  {fam['seconds']:9.4f} s  {fam['family']}: {fam['jobs']} job{_s(fam['jobs'])}{runs}, "
                   f"slowest {fam['max_seconds']:.4f} s")
    return EXIT_OK


def _s(n: int) -> str:
    return "" if n == 1 else "s"
