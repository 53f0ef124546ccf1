"""``pipeline verify-family``: a family's valid key space compiles (sampled pbr, all of the HLSL family)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.builtin import builtin_rules_dir
from pipeline.cli.verify import command
from pipeline.cook.verify import family_keys
from pipeline.rules.counts import count_space
from pipeline.rules.load import load_rulesets
from paths import REPO

ROOT = REPO
FAMILY = ROOT / "tests" / "data" / "hlsl"  # rules/simple.yaml and its HLSL sources


def run(*args: str):
    return CliRunner().invoke(command, list(args))


def simple_args(materials: Path, cache: Path) -> list[str]:
    return ["simple", "--rules", str(FAMILY / "rules"), "--materials", str(materials), "--cache", str(cache),
            "--jobs", "1"]


def test_pbr_sample_compiles_and_reruns_from_the_cache(tmp_path: Path) -> None:
    args = ["pbr", "--sample", "4", "--seed", "7", "--cache", str(tmp_path / "cache"), "--jobs", "2", "--json"]
    first = run(*args)
    assert first.exit_code == 0, first.stdout + first.stderr
    doc = json.loads(first.stdout)
    assert doc["failures"] == [] and doc["keys"] == 12
    assert {p: c["checked"] for p, c in doc["passes"].items()} == {"depth": 4, "forward": 4, "shadow": 4}
    assert doc["compiled"] == doc["jobs"] > 0
    again = json.loads(run(*args).stdout)
    assert (again["compiled"], again["cache_hits"]) == (0, doc["jobs"])


def test_hlsl_family_all_keys_compile(tmp_path: Path) -> None:
    result = run(*simple_args(FAMILY, tmp_path / "cache"), "--all")
    assert result.exit_code == 0, result.stderr
    assert "simple/forward: 12 of 12 valid keys checked" in result.stdout
    assert re.search(r"verified simple: 12 keys -> 24 unique jobs .*; 24 compiled, 0 cached; ok$", result.stdout, re.M)


def test_failures_are_located_and_remembered(tmp_path: Path) -> None:
    materials = tmp_path / "materials"
    shutil.copytree(FAMILY, materials)
    source = materials / "simple" / "simple.hlsl"
    lines = source.read_text().splitlines()
    at = lines.index("    color *= input.color;") + 1            # inside PSMain's `#if VERTEX_COLOR`
    lines.insert(at, "    color *= undefinedThing;")
    source.write_text("\n".join(lines) + "\n")

    result = run(*simple_args(materials, tmp_path / "cache"), "--all", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    # HLSL compiles the whole file for either entry point: both stages of the 6 VERTEX_COLOR=1 keys fail
    assert doc["failed_jobs"] == 12
    assert all("VERTEX_COLOR=1" in f["key"] for f in doc["failures"])
    assert {(Path(f["file"]).name, f["line"]) for f in doc["failures"]} == {("simple.hlsl", at + 1)}

    again = run(*simple_args(materials, tmp_path / "cache"), "--all", "-q")
    assert again.exit_code == 1
    assert "24 cached; 12 jobs FAILED" in again.stdout
    lines = [line for line in again.stderr.splitlines() if ": error: " in line]
    assert lines and all(re.search(rf"simple/simple\.hlsl:{at + 1}: error: .* \(breaks 6 keys, e\.g\. "
                                   rf"simple/forward\{{.*VERTEX_COLOR=1.*\}}\) \[fragment, vertex\]$", line)
                         for line in lines), again.stderr
    assert any("undefinedThing" in line for line in lines)
    # one line per message: the 12 failed jobs (both stages of 6 keys) are one error each, not twelve
    assert len(lines) == len({line.split(": error: ")[1] for line in lines}) == len(doc["failures"])
    assert all(f["count"] == 6 and len(f["jobs"]) == 12 for f in doc["failures"])


def test_unknown_family_is_a_user_error(tmp_path: Path) -> None:
    result = run("nope", "--rules", str(FAMILY / "rules"), "--cache", str(tmp_path / "cache"))
    assert result.exit_code == 1 and "unknown shader family 'nope' (known: simple)" in result.stderr


@pytest.mark.parametrize("pass_name", ["depth", "forward"])
def test_samples_are_seeded_distinct_and_complete(pass_name: str) -> None:
    (pbr,) = [rs for rs in load_rulesets(builtin_rules_dir()) if rs.shader == "pbr"]
    first = list(family_keys(pbr, pass_name, 10, seed=1))
    assert first == list(family_keys(pbr, pass_name, 10, seed=1))
    assert first != list(family_keys(pbr, pass_name, 10, seed=2))
    assert len(set(first)) == 10
    static = pbr.compiled.passes[pass_name].static
    assert all(tuple(name for name, _ in key.features) == static for key in first)


def test_all_enumerates_exactly_the_valid_count() -> None:
    (pbr,) = [rs for rs in load_rulesets(builtin_rules_dir()) if rs.shader == "pbr"]
    assert len(list(family_keys(pbr, "depth", None, 0))) == count_space(pbr, "depth").valid
