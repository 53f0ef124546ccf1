"""Rule sets that explode: counting stays exact where it can and bounded where it cannot.

A normalize rule reading many features, or features with large domains, would need a
table of 2**26 ... 2**34 cells (minutes, then a MemoryError).  Counting refuses any
table over ``[limits] max_count_cells`` with an error located at the rule; within the
limit the count is exact, integers past 64 bits included.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from robust_helpers import copy_world, run_cli

TIMEOUT = 120


def wide_rules(folder: Path, features: int, reads: int, *, values: int = 2) -> Path:
    """A family of ``features`` features (bool, or ``values`` tokens) and one rule reading ``reads`` of them."""
    spec = {"type": "bool"} if values == 2 else {"values": [f"V{i}" for i in range(values)]}
    condition = " and ".join(f"F{i}" if values == 2 else f"F{i} == 'V1'" for i in range(reads))
    data = {"shader": "wide", "sources": {"vertex": "pbr/pbr.vert", "fragment": "pbr/pbr.frag"},
            "select": "False", "features": {f"F{i}": dict(spec) for i in range(features)}, "derive": {},
            "normalize": [{"when": condition, "set": {"F0": False if values == 2 else "V0"}}] if reads else [],
            "passes": {"main": {"features": "all"}}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "wide.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def report_json(world: Path, rules: Path, cache: Path):
    return run_cli("report", world, "--rules", rules, "--cache", cache, "--format", "json", timeout=TIMEOUT)


def rule_line(rules: Path) -> int:
    return next(i for i, line in enumerate((rules / "wide.yaml").read_text().splitlines(), 1) if "when:" in line)


@pytest.mark.slow
@pytest.mark.parametrize("features, values", [(26, 2), (34, 2), (2, 5000)])
def test_a_rule_too_wide_to_count_is_a_located_error_not_minutes_or_memory(tmp_path, features, values):
    rules = wide_rules(tmp_path / "rules", features, features, values=values)
    world = copy_world(tmp_path / "world")
    proc = report_json(world, rules, tmp_path / "cache")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and len(errors[0]) < 600
    assert errors[0].startswith(f"{rules / 'wide.yaml'}:{rule_line(rules)}:")
    assert "over limits.max_count_cells (1048576)" in errors[0]
    check = run_cli("rules", "check", "--rules", rules, timeout=TIMEOUT)  # the lint skips what it cannot judge
    assert check.returncode in (0, 1) and "Traceback" not in check.stderr


@pytest.mark.slow
def test_within_the_limit_the_count_is_exact_and_the_limit_is_configurable(tmp_path):
    rules = wide_rules(tmp_path / "rules", 18, 18)
    world = copy_world(tmp_path / "world")
    proc = report_json(world, rules, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    (family,) = [f for f in json.loads(proc.stdout)["families"] if f["shader"] == "wide"]
    assert (family["possible"], family["valid"]) == (2**18, 2**18 - 1)  # every assignment but all-true
    (world / "pipeline.toml").write_text("[limits]\nmax_count_cells = 1000\n")
    proc = report_json(world, rules, tmp_path / "cache")
    assert proc.returncode == 1 and "over limits.max_count_cells (1000)" in proc.stderr


@pytest.mark.slow
def test_report_json_writes_counts_past_64_bits_exactly(tmp_path):
    rules = wide_rules(tmp_path / "rules", 64, 0)
    world = copy_world(tmp_path / "world")
    for fmt in ("json", "table", "csv"):
        proc = run_cli("report", world, "--rules", rules, "--cache", tmp_path / "cache", "--format", fmt,
                       timeout=TIMEOUT)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert fmt == "table" or str(2**64) in proc.stdout
    (family,) = json.loads(proc_json := report_json(world, rules, tmp_path / "cache").stdout)["families"]
    assert family["possible"] == family["valid"] == 2**64 and proc_json.count(str(2**64)) >= 2
    saved = tmp_path / "old.json"
    saved.write_text(proc_json)
    since = run_cli("report", world, "--rules", rules, "--cache", tmp_path / "cache", "--since", saved,
                    timeout=TIMEOUT)
    assert since.returncode == 0, since.stderr
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)  # a report only reads the cache: it may never have been made
