"""``pipeline cook``: compile what the content requires and the cache lacks."""

from __future__ import annotations

import time

import click

from pipeline import api
from pipeline.cli._common import (
    EXIT_OK,
    EXIT_USER,
    cache_option,
    echo_json,
    guarded,
    materials_option,
    rules_option,
)
from pipeline.cook import noop
from pipeline.errors import MAX_NAME, Location, one_line
from pipeline.report.render import render_json
from pipeline.progress import for_stream


@click.command("cook")
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.option("--level", "-l", metavar="L", help="Cook only this level.")
@click.option("--chunk", "-c", metavar="C", help="Cook only this chunk (e.g. forest/c03).")
@cache_option
@click.option("--out", "-o", type=click.Path(file_okay=False), default="build", show_default=True,
              help="Output folder for <chunk>.json, its <name>.<hex>.pak and <level>.level.json.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Compile workers [default: all cores].")
@click.option("--backend", type=click.Choice(["capi", "cli", "auto"]), default="capi", show_default=True,
              help="capi: glslang in-process; cli: one glslangValidator per job.")
@click.option("--scheduler", envvar="PIPELINE_SCHEDULER", metavar="ADDRESS",
              help="Compile on a Dask cluster: tcp://HOST:8786, or local:N for N local worker processes "
                   "('none': this machine) [default: $PIPELINE_SCHEDULER, else pipeline.toml [farm] scheduler].")
@click.option("--remote-cache", metavar="URL",
              help="Shared cache tier behind the local one: a folder or an fsspec URL such as s3://bucket/path "
                   "[default: pipeline.toml [cache] remote].")
@click.option("--remote-cache-mode", type=click.Choice(["read", "readwrite"]), default=None,
              help="read: only fetch; readwrite: also write back what this machine compiled [default: readwrite].")
@click.option("--explain", is_flag=True, help="Print why each compiled job ran, and where.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first compile error.")
@click.option("--verify", is_flag=True,
              help="Trust no recorded file stat: read and hash every input again, compare every output.")
@rules_option
@materials_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary document on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@guarded
def command(world, level, chunk, cache, out, jobs, backend, scheduler, remote_cache, remote_cache_mode, explain,
            fail_fast, verify, rules, materials, as_json, quiet):
    """Compile the permutations WORLD requires into per-chunk SPIR-V outputs.

    Scans the world (cached), evaluates the rule sets into permutation keys,
    projects each key to per-stage compile jobs, and compiles only the jobs the
    content-addressed cache does not already hold.  Writes, under --out:

    \b
      <chunk>.json        keys -> features, render states, stage blob hashes
      <name>.<hex>.pak    the chunk's SPIR-V blobs, named by content (docs/formats.md)
      <level>.level.json  the union of the level's chunk manifests

    A bad file or a shader that fails to compile is reported with its location;
    every other chunk and job still cooks, and the exit code is 1.  Cooking a whole
    world (or a --level) also removes the outputs of chunks that no longer exist.
    Ctrl-C stops with exit code 130; what was written is complete.

    With --scheduler the misses compile on a Dask cluster (the cache and outputs
    are still written here, byte-identical to a local cook); with --remote-cache
    a shared cache is asked for the local misses before anything compiles.
    """
    stamp_args = dict(world=world, level=level, chunk=chunk, cache=cache, out=out, rules=rules,
                      materials=materials, backend=backend)
    noop.forget(stamp_args)  # until this cook has finished cleanly
    started_ns = time.time_ns()
    w = api.open_world(world, rules=rules, materials=materials)
    progress = for_stream(quiet=quiet or as_json)
    result = api.cook(w, level=level, chunk=chunk, cache=cache, out=out, jobs=jobs, backend=backend,
                      fail_fast=fail_fast, progress=progress, scheduler=scheduler, remote_cache=remote_cache,
                      remote_cache_mode=remote_cache_mode, verify=verify)
    if as_json:
        echo_json(result.to_json())
    else:
        _render(result, explain)
    _stamp(w, result, stamp_args, verify or explain or scheduler or remote_cache, started_ns)
    return EXIT_USER if result.errors else EXIT_OK


def _stamp(w: api.World, result: api.CookResult, args: dict, unusual, started_ns: int) -> None:
    """After a clean local cook: the stamp that answers the next identical cook by file stats."""
    doc = result.to_json()
    if unusual or args["backend"] != "capi" or doc["warnings"] or doc["cancelled"] \
            or doc["farm"] or doc["remote"] or w.allowed_roots:
        return noop.forget(args)
    again = {**doc, "compiled": 0, "cache_hits": doc["cache_hits"] + doc["compiled"] + doc["fetched"], "fetched": 0,
             "written": [], "removed": [], "explain": []}
    try:
        from pipeline.cook.compile.toolchain import prefix

        compiler_dir = str(prefix() / "lib")
    except Exception:  # noqa: BLE001 - no toolchain found: no stamp
        return noop.forget(args)
    noop.write_stamp(args, world_root=str(w.root), rules_dir=str(w.rules_dir), materials_dir=str(w.materials_dir),
                     compiler_dir=compiler_dir, doc=render_json(again), text=summary(again) + "\n",
                     errors="".join(_located(e) + "\n" for e in doc["errors"]), code=EXIT_USER if doc["errors"] else EXIT_OK,
                     started_ns=started_ns)


def _render(result: api.CookResult, explain: bool) -> None:
    doc = result.to_json()
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    for e in result.errors:
        click.echo(_located(e), err=True)
    if explain:
        for line in doc["explain"]:
            defines = ",".join(f"{k}={v}" for k, v in sorted(line["defines"].items()))
            click.echo(f"ran {line['source']} [{line['stage']}] {{{defines}}} on {line['where']}: {line['reason']}")
    click.echo(summary(doc))
    if doc["farm"]:
        click.echo(_farm_line(doc["farm"]))


def summary(doc: dict) -> str:
    """The one-line summary of a cook's JSON document."""
    return (
        f"cooked {doc['chunks']} chunks: {doc['draws']} draws -> {doc['keys']} keys -> "
        f"{doc['stage_uses']} stage uses -> {doc['jobs']} unique jobs ({_stages(doc['stages'])}); "
        f"{doc['compiled']} compiled, {doc['cache_hits']} cached{_fetched(doc)}, {len(doc['errors'])} errors; "
        f"{len(doc['written'])} of {len(doc['outputs'])} output files written"
        + (f"; removed {len(doc['removed'])} outputs of chunks that no longer exist" if doc["removed"] else "")
    )


def _farm_line(farm: dict) -> str:
    """One line on what the build farm did and measured."""
    return (f"farm {farm['scheduler']}: {farm['workers']} workers, {farm['batches']} batches "
            f"(mean {farm['mean_batch']} jobs), {farm['per_job_ms']:.1f} ms per job, "
            f"{farm['overhead_ms']:.1f} ms scheduling per batch, startup {farm['startup_s']:.2f} s")


def _fetched(doc: dict) -> str:
    """`` (12 fetched from the shared cache)`` when the shared tier supplied any."""
    return f" ({doc['fetched']} fetched from the shared cache)" if doc["fetched"] else ""


def _stages(stages: dict) -> str:
    """``vertex 30->9, fragment 30->28``: per stage, key uses -> unique jobs."""
    return ", ".join(f"{stage} {s['uses']}->{s['jobs']}" for stage, s in stages.items())


def _located(e: dict) -> str:
    """One error document of the cook as ``path:line:col: error: message (key ...)``."""
    where = Location(e["file"] or "?", e.get("line"), e.get("col"), e.get("pointer"))
    suffix = f" (key {one_line(e['key'], MAX_NAME)})" if e.get("key") else ""
    return f"{where}: error: {one_line(e['message'])}{suffix}"
