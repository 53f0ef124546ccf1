"""Messages: --since scope mismatch, errors on stderr with --json, paths from the current
folder, and -q/-v/--color on every command."""

from __future__ import annotations

import json
import shutil

import click
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from paths import REPO

ROOT = REPO


def _leaf_commands(group, prefix=()):
    """Every command of the CLI (walked from the group, so a new command is checked too)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _leaf_commands(command, (*prefix, name))
        else:
            yield [*prefix, name]


COMMANDS = list(_leaf_commands(main))


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_takes_quiet_verbose_and_color(command):
    assert len(COMMANDS) >= 13 and ["clean"] in COMMANDS and ["runtime", "render"] in COMMANDS
    help_text = run(*command, "--help").output
    for option in ("-q, --quiet", "-v, --verbose", "--color [auto|always|never]"):
        assert option in help_text, (command, option)


def test_since_a_whole_world_report_scoped_to_a_chunk_warns(site):
    whole = run("report", "world", "--cache", "cache", "--format", "json")
    assert whole.exit_code == 0, whole.output
    (site / "old.json").write_text(whole.stdout)
    doc = json.loads(whole.stdout)
    assert doc["scope"] == {"level": None, "chunk": None}
    scoped = run("report", "world", "--cache", "cache", "--chunk", "forest/c01/", "--format", "json",
                 "--since", "old.json")
    assert scoped.exit_code == 0, scoped.output
    since = json.loads(scoped.stdout)["since"]
    assert since["removed"] == [] and since["added"] == []  # not "everything else removed"
    assert since["warning"].startswith("scope mismatch: old.json covers the whole world, this report chunk forest/c01")
    assert f"old.json: warning: {since['warning']}" in scoped.stderr
    same = run("report", "world", "--cache", "cache", "--format", "json", "--since", "old.json")
    assert json.loads(same.stdout)["since"]["warning"] is None


def test_errors_go_to_stderr_as_lines_with_json_and_name_files_from_here(site):
    (site / "world" / "forest" / "c01" / "broken.gltf").write_text("{bad")
    line = "world/forest/c01/broken.gltf:1:2: error: invalid JSON: key must be a string"
    for command in (["keys", "world", "--cache", "cache", "--json"],
                    ["cook", "world", "--cache", "cache", "--out", "build", "-j", "1", "--json"],
                    ["report", "world", "--cache", "cache", "--format", "json"]):
        result = run(*command)
        assert result.exit_code == 1, (command, result.output)
        assert line in result.stderr.splitlines(), (command, result.stderr)
        json.loads(result.stdout)  # stdout stays one JSON document


def test_color_always_marks_errors_and_never_does_not(site):
    (site / "world" / "forest" / "c01" / "broken.gltf").write_text("{bad")
    coloured = run("keys", "world", "--cache", "cache", "--color", "always")
    plain = run("keys", "world", "--cache", "cache", "--color", "never")
    assert "\x1b[31m" in coloured.stderr and "\x1b[" not in plain.stderr


def test_table_report_leads_with_what_needs_action(site):
    assert run("cook", "world", "--cache", "cache", "--out", "build", "-j", "1", "-q").exit_code == 0
    result = run("report", "world", "--cache", "cache", "--budget", "25")
    assert result.exit_code == 1
    doc = json.loads(run("report", "world", "--cache", "cache", "--format", "json").stdout)
    total = doc["sizes"]["total"]
    lines = result.stdout.splitlines()
    required = sum(t["required"] for t in doc["totals"])  # every family of the world
    fallback = f" (+{len(doc['fallback_keys'])} fallback)" if doc["fallback_keys"] else ""
    assert lines[2] == f"OVER BUDGET: world (all) needs {required} keys, budget 25"
    assert lines[3].startswith(f"required keys {required}{fallback}; {total['blobs']} binaries, "
                               f"{total['bytes']:,} bytes ({total['compressed']:,} compressed); compile time ")
    assert lines[4].startswith(f"pipeline {doc['provenance']['tool_version']}, rules "
                               f"{doc['provenance']['rules_hash'][:12]}, world ")


@pytest.mark.slow
def test_shader_and_rule_errors_name_files_from_where_the_command_runs(site, monkeypatch):
    """The same shader error, remembered in the cache, is named from each current folder in turn."""
    world = site / "world"
    shutil.copytree(ROOT / "materials", world / "mat")
    shutil.copytree(ROOT / "rules", world / "rul")
    with (world / "pipeline.toml").open("a") as toml:
        toml.write('\nmaterials = "mat"\nrules = "rul"\n')
    frag = world / "mat" / "pbr" / "pbr.frag"
    lines = frag.read_text().splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("void main"))
    frag.write_text("\n".join([*lines[:at], "float broken = undefined_thing;", *lines[at:]]) + "\n")
    mark = f"pbr/pbr.frag:{at + 1}: error: 'undefined_thing' : undeclared identifier"
    cook = ["cook", "--cache", str(site / "cache"), "--out", str(site / "build"), "-j", "1", "-q"]
    first = run(cook[0], "world", *cook[1:])
    assert first.exit_code == 1 and first.stderr.splitlines()[0].startswith(f"world/mat/{mark}"), first.stderr
    monkeypatch.chdir(world)
    again = run(cook[0], ".", *cook[1:])  # the error comes from the cache this time
    assert again.stderr.splitlines()[0].startswith(f"mat/{mark}"), again.stderr
    monkeypatch.chdir(world / "forest")
    outside = run(cook[0], str(world), *cook[1:])
    assert outside.stderr.splitlines()[0].startswith(f"{world}/mat/{mark}"), outside.stderr
    (world / "rul" / "pbr.yaml").write_text((world / "rul" / "pbr.yaml").read_text() + "  bogus: [\n")
    rule = run("keys", str(world), "--cache", str(site / "cache"), "-q")
    assert rule.exit_code == 1 and rule.stderr.startswith(f"{world}/rul/pbr.yaml:"), rule.stderr
    monkeypatch.chdir(world)
    rule = run("keys", ".", "--cache", str(site / "cache"), "-q")
    assert rule.stderr.startswith("rul/pbr.yaml:"), rule.stderr
