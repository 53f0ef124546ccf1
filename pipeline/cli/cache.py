"""``pipeline cache stats|gc``: what the local cache and the shared tier hold; drop what no cook used."""

from __future__ import annotations

import datetime

import click

from pipeline import api
from pipeline.cli._common import EXIT_OK, cache_option, echo_json, guarded, output_options

remote_option = click.option("--remote-cache", metavar="URL",
                             help="Shared cache tier (folder or fsspec URL) [default: pipeline.toml [cache] remote].")
world_option = click.option("--world", type=click.Path(exists=True, file_okay=False), default=None,
                            help="World whose pipeline.toml names the shared cache [default: this folder].")
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


@click.group("cache")
def command() -> None:
    """Inspect and clean the local cache and the shared cache tier."""


@command.command("stats")
@output_options
@cache_option
@remote_option
@world_option
@json_option
@guarded
def stats(cache, remote_cache, world, as_json):
    """Job records, blobs and bytes each tier holds, and when a cook last used it."""
    report = api.cache_stats(cache=cache, world=world, remote_cache=remote_cache)
    if as_json:
        echo_json(report.to_json())
        return EXIT_OK
    for name, tier in (("local", report.local), ("remote", report.remote)):
        if tier is not None:
            click.echo(f"{name} {tier.location}: {tier.jobs} jobs, {tier.blobs} blobs, "
                       f"{_size(tier.bytes)}, {tier.uses} use sets, last used {_when(tier.last_use)}")
    return EXIT_OK


@command.command("gc")
@output_options
@click.option("--keep-days", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Keep what a cook used within this many days.")
@cache_option
@remote_option
@click.option("--remote-cache-mode", type=click.Choice(["read", "readwrite"]), default=None,
              help="read: only report what would be removed from the shared tier [default: readwrite].")
@world_option
@json_option
@guarded
def gc(keep_days, cache, remote_cache, remote_cache_mode, world, as_json):
    """Remove job records and blobs no cook used within --keep-days (local, and the shared tier)."""
    report = api.cache_gc(keep_days=keep_days, cache=cache, world=world, remote_cache=remote_cache,
                          remote_cache_mode=remote_cache_mode)
    if as_json:
        echo_json(report.to_json())
        return EXIT_OK
    for name, tier in (("local", report.local), ("remote", report.remote)):
        if tier is not None:
            verb = "would remove" if tier.dry_run else "removed"
            click.echo(f"{name} {tier.location}: {verb} {tier.jobs_removed} jobs, {tier.blobs_removed} blobs "
                       f"({_size(tier.bytes_removed)}), {tier.uses_removed} use sets; "
                       f"kept {tier.jobs_kept} jobs, {tier.blobs_kept} blobs")
    return EXIT_OK


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "never"
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
