"""``pipeline cook``: compile what the content requires and the cache lacks."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import click

from pipeline import api
from pipeline.cli._common import (
    EXIT_OK,
    EXIT_USER,
    cache_option,
    color_severity,
    display_path,
    display_text,
    echo_json,
    guarded,
    jobs_option,
    key_name,
    materials_option,
    output_options,
    rules_option,
    shown_document,
    styled,
    verbosity,
)
from pipeline.cook import noop
from pipeline.cook.error_docs import breaks
from pipeline.errors import MAX_NAME, Location, one_line
from pipeline.progress import for_stream
from pipeline.report.render import render_json


@click.command("cook")
@output_options
@click.argument("world", type=click.Path(exists=True, file_okay=False))
@click.option("--level", "-l", metavar="L", help="Cook only this level.")
@click.option("--chunk", "-c", metavar="C", help="Cook only this chunk (e.g. forest/c03).")
@cache_option
@click.option("--out", "-o", type=click.Path(file_okay=False), default="build", show_default=True,
              help="Output folder for shaders.pak, <chunk>.json and <level>.level.json.")
@jobs_option
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
@click.option("--audit", type=click.FloatRange(0, 100), default=0, metavar="N",
              help="Recompile N% of the farm's results here (at least one job; the same jobs each run) and compare "
                   "the bytes: a worker that differs fails the cook and none of its results is used.")
@click.option("--explain", is_flag=True,
              help="Print why each compiled job ran, and where (the key, the reason, the defines that changed), "
                   "and why each output file was rewritten.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first compile error.")
@click.option("--dry-run", "-n", is_flag=True,
              help="Say what would be compiled, written and removed, and why; compile, write and record nothing.")
@click.option("--verify", is_flag=True,
              help="Trust no recorded file stat: read and hash every input again, compare every output, "
                   "check the shader library's own checksum (a bad one is rewritten).")
@click.option("--include-log", "include_logs", multiple=True, type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="A runtime miss log (JSON lines) or key list (.json, {\"keys\": [...]}) whose "
                                   "keys the rules accept are cooked too (repeatable; docs/runtime-axes.md).")
@click.option("--platform", "platforms", multiple=True, metavar="NAME",
              help="Cook only this platform's targets (pipeline.toml [platforms.NAME]; repeatable) [default: all].")
@rules_option
@materials_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary document on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output and no change block.")
@guarded
def command(world, level, chunk, cache, out, jobs, backend, scheduler, remote_cache, remote_cache_mode, audit, explain,
            fail_fast, dry_run, verify, include_logs, platforms, rules, materials, as_json, quiet):
    """Compile the permutations WORLD requires into per-chunk SPIR-V outputs.

    Scans the world (cached), evaluates the rule sets into permutation keys,
    projects each key to per-stage compile jobs, and compiles only the jobs the
    content-addressed cache does not already hold.  Writes, under --out:

    \b
      shaders.pak         every blob of the folder once, with its reflection
      <chunk>.json        the chunk index: keys, blobs, draws -> pipeline states
      <level>.level.json  the union of the level's chunk indexes (docs/formats.md)

    After the cook, a short change block says what changed and why: the files
    written, the keys that appeared in or vanished from a chunk, and each compiled
    job with the key that needs it and the reason (-v lists everything).  Every
    compile's time goes to the timing log in the cache (`pipeline report --timings`).

    A bad file or a shader that fails to compile is reported with its location;
    every other chunk and job still cooks, and the exit code is 1.  Cooking a whole
    world (or a --level) also removes the outputs of chunks that no longer exist.
    Ctrl-C stops with exit code 130; what was written is complete.

    With --scheduler the misses compile on a Dask cluster (the cache and outputs
    are still written here, byte-identical to a local cook); with --remote-cache
    a shared cache is asked for the local misses before anything compiles.
    """
    if dry_run:
        return _dry_run(world, level, chunk, cache, out, backend, rules, materials, as_json, quiet, platforms)
    stamp_args = dict(world=world, level=level, chunk=chunk, cache=cache, out=out, rules=rules,
                      materials=materials, backend=backend)
    noop.forget(stamp_args)  # until this cook has finished cleanly
    walk = noop.walked(stamp_args)  # the missed no-op check's stamps: the cook began when they were taken
    started_ns = walk.started_ns if walk is not None else time.time_ns()
    w = api.open_world(world, rules=rules, materials=materials)
    if walk is not None:
        w.listing = walk.listing(os.path.abspath(w.root))  # its chunks are where that walk found them
    progress = for_stream(quiet=quiet or as_json)
    result = api.cook(w, level=level, chunk=chunk, cache=cache, out=out, jobs=jobs, backend=backend,
                      fail_fast=fail_fast, progress=progress, scheduler=scheduler, remote_cache=remote_cache,
                      remote_cache_mode=remote_cache_mode, verify=verify, audit=audit, include_logs=include_logs,
                      platform=platforms, stamps=walk.stamps if walk is not None else None)
    folded, cooked = result.folded, api.cooked_targets(w, platform=platforms)
    if as_json:
        for e in result.errors:  # machines read stdout; people and logs still see the errors
            click.echo(color_severity(_located(e.to_json(), w.root)), err=True)
        logs = {"folded": [f.to_json() for f in folded.folded], "rejected": [d.to_json() for d in folded.rejected]}
        doc = result.to_json() | cooked
        echo_json(shown_document(doc | (logs if folded.folded or folded.rejected else {}), w.root))
    else:
        for d in folded.rejected:
            click.echo(f"{d}", err=True)
        if folded.folded:
            click.echo(f"folded {len(folded.folded)} key use(s) from logs "
                       f"({len(folded.keys())} key(s); `pipeline explain` names each one's log line)")
        _render(result, explain, verbosity(quiet), w.root)
    _stamp(w, result, stamp_args, verify or explain or scheduler or remote_cache or folded.folded or folded.rejected
           or platforms, started_ns, cooked, walk)  # a cook of some platforms is no stamp for the cook of all
    return EXIT_USER if result.errors else EXIT_OK


def _dry_run(world, level, chunk, cache, out, backend, rules, materials, as_json, quiet, platforms=()) -> int:
    """``--dry-run``: what a cook would do, from ``api.cook(..., dry_run=True)``; nothing is changed."""
    w = api.open_world(world, rules=rules, materials=materials)
    result = api.cook(w, level=level, chunk=chunk, cache=cache, out=out, backend=backend,
                      progress=for_stream(quiet=quiet or as_json), dry_run=True, platform=platforms)
    doc = shown_document(result.to_json(), w.root)
    _problems(doc, w.root)
    if as_json:
        echo_json(doc)
        return EXIT_USER if doc["errors"] else EXIT_OK
    if not quiet:
        for line in doc["compile"]:
            click.echo(f"would compile {job_line(line)}")
        for item in doc["write"]:
            click.echo(f"would write {display_path(item['path'])}: "
                       f"{item['reason']}")
        for path in doc["remove"]:
            click.echo(f"would remove {display_path(path)}: its chunk no longer exists")
    click.echo(f"dry run: {doc['chunks']} chunks -> {_keys(doc)} -> {doc['jobs']} unique jobs; "
               f"{len(doc['compile'])} to compile, {doc['cached']} cached, {len(doc['errors'])} errors; "
               f"{sum(2 if w['chunk'] else 1 for w in doc['write'])} output files to write, "
               f"{len(doc['remove'])} to remove; nothing was changed")
    return EXIT_USER if doc["errors"] else EXIT_OK


def _stamp(w: api.World, result: api.CookResult, args: dict, unusual, started_ns: int, cooked: dict,
           walk: noop.Walk | None = None) -> None:
    """After a local cook: the stamp that answers the next identical cook by file stats
    (:mod:`pipeline.cook.noop`), with what that cook prints (:func:`noop_document`); ``walk``: what the
    missed no-op check before it walked, the inputs' stamps as the cook began."""
    doc = noop_document(shown_document(result.to_json() | cooked, w.root))
    if doc is None or unusual or args["backend"] != "capi" or w.allowed_roots or _plugins_elsewhere(w, result):
        return noop.forget(args)
    try:
        from pipeline.compilers.toolchain import prefix

        compiler_dir = str(prefix() / "lib")
    except Exception:  # noqa: BLE001 - no toolchain found: no stamp
        return noop.forget(args)
    noop.write_stamp(args, world_root=str(w.root), rules_dir=str(w.rules_dir), materials_dir=str(w.materials_dir),
                     compiler_dir=compiler_dir, doc=render_json(doc), text=summary(doc) + "\n",
                     errors="".join(click.unstyle(_located(e, w.root)) + "\n" for e in doc["errors"]),
                     code=EXIT_USER if doc["errors"] else EXIT_OK, started_ns=started_ns, folder=_folder(w, args),
                     walk=walk)


def _folder(w: api.World, args: dict) -> str | None:
    """The world folder a cook of one chunk or level read alone (None: the whole world, or a grid cell)."""
    name = args.get("chunk") or args.get("level")
    if not name or (args.get("chunk") and args.get("level")):
        return None
    name = name.replace("\\", "/").strip("/")
    return name if (w.root / name).is_dir() and not w.scope else None


def _plugins_elsewhere(w: api.World, result: api.CookResult) -> bool:
    """True when a plug-in the cook used has source outside the world, rules and shader library, whose
    edits the stamp would not see."""
    from pipeline.compilers.plugins import source_paths
    from pipeline.scan.provided import providers_of

    roots = [w.root.resolve(), w.rules_dir.resolve(), w.materials_dir.resolve()]
    job = next(iter(result.plan.jobs.values()), None)
    refs = [*(job.options.plugins.refs() if job is not None else ()), *(p.ref for p in providers_of(w.rulesets))]
    return any(not any(path.resolve().is_relative_to(root) for root in roots)
               for ref in refs for path in source_paths(ref.spec))


def noop_document(doc: dict) -> dict | None:
    """What the next identical cook prints when nothing changes in between: this cook's document with
    nothing compiled, written or removed, every job a cache hit; None when that cannot be told from it
    (jobs fetched or cancelled, warnings, a farm or a shared tier, or errors after a cook that changed
    something: the next cook takes the full path)."""
    if doc["fetched"] or doc["warnings"] or doc["cancelled"] or doc["farm"] or doc["remote"]:
        return None
    if not (doc["compiled"] or doc["written"] or doc["removed"]):
        return doc  # this cook was a no-op itself
    if doc["errors"]:
        return None  # failed jobs and files: told again by the next cook, which takes the full path
    return doc | {"compiled": 0, "cache_hits": doc["cache_hits"] + doc["compiled"], "written": [], "removed": [],
                  "explain": [], "explain_outputs": [], "timing_log": None,
                  "changes": {name: [] for name in doc["changes"]}}


def _problems(doc: dict, root) -> None:
    """A cook's (or dry run's) warnings, then its errors as located lines, on stderr."""
    for warning in doc["warnings"]:
        click.echo(f"{styled('warning:', fg='yellow', bold=True)} {warning}", err=True)
    for e in doc["errors"]:
        click.echo(color_severity(_located(e, root)), err=True)


def _render(result: api.CookResult, explain: bool, level: int, root) -> None:
    doc = shown_document(result.to_json(listed=False), root)  # read here, not written: keys added as held
    _problems(doc, root)
    if level >= 0:
        for line in change_block(doc, explain=explain, limit=None if level > 0 else CHANGE_LIMIT):
            click.echo(line)
    elif explain:  # asked for by name: shown with --quiet too
        for line in doc["explain"]:
            click.echo(job_line(line, level > 0))
        for item in doc.get("explain_outputs") or []:
            click.echo(output_line(item))
    click.echo(summary(doc))
    if doc["farm"]:
        click.echo(_farm_line(doc["farm"]))


def summary(doc: dict) -> str:
    """The one-line summary of a cook's JSON document."""
    return (
        f"cooked {doc['chunks']} chunks: {doc['draws']} draws -> {_keys(doc)} -> "
        f"{doc['stage_uses']} stage uses -> {doc['jobs']} unique jobs ({_stages(doc['stages'])}); "
        f"{doc['compiled']} compiled, {doc['cache_hits']} cached{_fetched(doc)}, {len(doc['errors'])} errors; "
        f"{len(doc['written'])} of {len(doc['outputs'])} output files written"
        + (f"; removed {len(doc['removed'])} outputs of chunks that no longer exist" if doc["removed"] else "")
    )


def _keys(doc: dict) -> str:
    """``36 keys (+3 fallback)``: the keys the draws require (``pipeline report``'s required), then the
    fallback keys cooked beside them that no draw requires."""
    fallback = doc.get("fallback_keys", 0)
    text = f"{doc['keys'] - fallback} keys"
    return text + (f" (+{fallback} fallback)" if fallback else "")


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


CHANGE_LIMIT = 8  # lines per list in the change block without -v


def change_block(doc: dict, explain: bool = False, limit: int | None = CHANGE_LIMIT) -> list[str]:
    """What this cook changed and why, from its JSON document; empty when nothing changed.

    A key is named by its shader/pass and hash prefix (``pipeline explain WORLD HASH`` tells the
    rest) with the features that differ from the nearest key its chunk had; -v shows whole keys."""
    changes, ran = doc["changes"], doc["explain"]
    full = limit is None
    lines: list[str] = []
    why = doc.get("explain_outputs") or []
    if changes["written"] and explain and why:  # each file with why it was rewritten
        lines.append(f"  files written ({len(changes['written'])}):")
        lines += [f"    {output_line(item)}" for item in why]
    elif changes["written"]:
        lines.append(f"  files written ({len(changes['written'])}): "
                     + ", ".join(_cut([display_path(p) for p in changes["written"]], limit)))
    if changes.get("removed"):
        lines.append(f"  files removed ({len(changes['removed'])}, of chunks that no longer exist): "
                     + ", ".join(_cut([display_path(p) for p in changes["removed"]], limit)))
    lines += _key_lines(changes, limit, full)
    if ran:
        lines.append(f"  compiled {len(ran)} job{'s' if len(ran) != 1 else ''}:")
        if explain or full or len(ran) <= limit:
            lines += [f"    {job_line(line, full)}" for line in ran]
        else:  # many: by reason, with -v/--explain for each job
            reasons = Counter(line["reason"].split(":", 1)[0] for line in ran)
            lines += [f"    {n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
            lines.append("    (--explain lists each job with its key)")
    return ["changes:", *lines] if lines else []


def _key_lines(changes: dict, limit: int | None, full: bool) -> list[str]:
    """Keys per chunk, counted once per chunk that gained (lost) them, with the distinct keys when that
    differs: a chunk cooked for the first time as a count; elsewhere each key, an added key with the
    features that differ from the nearest key its chunk had."""
    added, removed = changes["keys_added"], changes["keys_removed"]
    if not added and not removed:
        return []
    new_chunks = set(changes.get("new_chunks", ()))
    # a key counts once per chunk whose manifest gained (lost) it: uses, not the distinct keys
    head = f"  per-chunk key uses {styled(f'+{len(added)}', fg='green')} {styled(f'-{len(removed)}', fg='red')}"
    notes = []
    distinct = len({item["key"] for item in added} | {item["key"] for item in removed})
    if distinct != len(added) + len(removed):
        notes.append(f"{distinct} distinct key{'s' if distinct != 1 else ''}")
    fresh = sorted({a["chunk"] for a in added if a["chunk"] in new_chunks})
    if fresh:
        notes.append(f"{sum(1 for a in added if a['chunk'] in new_chunks)} in {len(fresh)} chunk(s) cooked for the "
                     "first time")
    head += f" ({'; '.join(notes)})" if notes else ""
    rows = []
    for item in added:
        if item["chunk"] in new_chunks:
            continue
        near = item.get("nearest")
        was = f"  ({_changed(near['changed'])}; was {key_name(near['key'], near['hash'], full)})" if near else ""
        rows.append(f"    {styled('+', fg='green')} {item['chunk']}: {key_name(item['key'], item['hash'], full)}{was}")
    rows += [f"    {styled('-', fg='red')} {item['chunk']}: {key_name(item['key'], item['hash'], full)}"
             for item in removed]
    return [head + (":" if rows else ""), *_cut(rows, limit, "    ")]


def _changed(changed: dict) -> str:
    return ", ".join(f"{name} {_show(old)} -> {_show(new)}" for name, (old, new) in changed.items()) or "same features"


def job_line(line: dict, full: bool = False) -> str:
    """``pbr/pbr.frag [fragment] for pbr/forward 1a2b3c4d5e6f: reason; NORMAL_MAP 0 -> 1``: the key and
    the defines that differ from the nearest cached job of the source, not the whole define set."""
    where = f" on {line['where']}" if line.get("where", "local") != "local" else ""
    text = f"{line['source']} [{line['stage']}] for {key_name(line['key'], line.get('key_hash'), full)}{where}: " \
           f"{line['reason']}"
    if line.get("changed"):
        text += "; " + _changed(line["changed"])
    return text


def output_line(item: dict) -> str:
    """``build/forest/c00.json: inputs changed: keys``: an output file a cook rewrote, and why."""
    return f"{display_path(item['path'])}: {item['reason']}"


def _show(value) -> str:
    return "(undefined)" if value is None else str(value)


def _cut(items: list[str], limit: int | None, indent: str = "") -> list[str]:
    if limit is None or len(items) <= limit:
        return list(items)
    return [*items[:limit], f"{indent}... and {len(items) - limit} more (-v lists all)"]


def _located(e: dict, root=None) -> str:
    """One error document of the cook as ``path:line:col: error: message (breaks N keys, e.g. ...)``,
    the path relative to the current folder."""
    file = e["file"] or "?"
    where = Location(display_path(file, root if _in_world(file, root) else None), e.get("line"), e.get("col"),
                     e.get("pointer"))
    return f"{where}: error: {one_line(display_text(e['message']))}{breaks(e, lambda key: one_line(key, MAX_NAME))}"


def _in_world(file: str, root) -> bool:
    """Scan and rule errors name files from the world root; shader errors by their canonical (absolute) paths."""
    return root is not None and not Path(file).is_absolute() and (Path(root) / file).exists()
