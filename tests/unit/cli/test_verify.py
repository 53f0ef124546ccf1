"""``pipeline verify-family``: the text summary says what the JSON document holds."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from paths import DATA

from pipeline.cli.verify import command

FAMILY = DATA / "hlsl"  # rules/simple.yaml and its HLSL sources


def run(cache: Path, *extra: str):
    args = ["simple", "--rules", str(FAMILY / "rules"), "--materials", str(FAMILY), "--cache", str(cache),
            "--jobs", "1", "--sample", "3", "--seed", "5", *extra]
    return CliRunner().invoke(command, args)


def test_text_and_json_agree_on_a_sample(tmp_path: Path) -> None:
    doc = json.loads(run(tmp_path / "cache", "--json").stdout)
    text = run(tmp_path / "cache")
    assert text.exit_code == 0, text.output
    *passes, summary = text.stdout.splitlines()
    assert passes == [f"simple/{name}: {c['checked']} of {c['valid']} valid keys checked"
                      for name, c in doc["passes"].items()]
    assert all(c["checked"] == 3 for c in doc["passes"].values())
    assert summary.startswith(f"verified simple: {doc['keys']} keys -> {doc['jobs']} unique jobs (")
    assert summary.endswith(f"0 compiled, {doc['jobs']} cached; ok")  # the JSON run filled the cache


def test_an_unknown_family_is_one_line_naming_the_known_ones(tmp_path: Path) -> None:
    result = CliRunner().invoke(command, ["pbrr", "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "pbr" in lines[0]
