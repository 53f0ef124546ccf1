"""``pipeline report`` on the real corpus: the funnel against ``pipeline keys`` and ``pipeline cook``,
what-if against an edited rule set, budgets, and --since against an edited world."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.keys.required import required_keys
from pipeline.report.funnel import ReportOptions, build_report
from pipeline.report.whatif import what_if
from pipeline.rules.counts import count_space
from pipeline.rules.load import load_rulesets
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
RULES = ROOT / "rules" / "pbr.yaml"


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def rows(doc: dict, key: str = "families") -> dict[str, dict]:
    return {r["pass"]: r for r in doc[key] if r["shader"] == "pbr"}


@pytest.fixture(scope="module")
def corpus_run(corpus, tmp_path_factory):
    """The corpus reported before and after ``pipeline cook`` into a fresh cache (scanned once)."""
    tmp = tmp_path_factory.mktemp("corpus")
    cache = tmp / "cache"
    world = api.open_world(corpus)
    with api.open_store(cache) as store:
        found = api.keys(world, store=store)
        before = build_report(world, found, store, ReportOptions())
    cooked = api.cook(world, cache=cache, out=tmp / "out", jobs=2)
    with api.open_store(cache) as store:
        after = build_report(world, found, store, ReportOptions())
    return {"cache": cache, "world": world, "found": found, "before": before.to_json(), "cooked": cooked,
            "after": after.to_json(), "report": after}


# ------------------------------------------------------------------ the funnel on the corpus
@pytest.mark.slow
def test_funnel_is_consistent_and_matches_pipeline_keys(corpus_run, corpus):
    doc = corpus_run["before"]
    keys = cli("keys", corpus, "--cache", corpus_run["cache"], "--json")
    listed = json.loads(keys.stdout)["keys"]
    for row in doc["families"]:
        assert row["required"] <= row["valid"] <= row["possible"]
        assert row["unique_sources"] <= row["required"] * row["stages"]
        assert row["required"] == sum(1 for k in listed if k["pass"] == row["pass"] and k["shader"] == row["shader"])
    assert sum(r["required"] for r in doc["totals"]) == len(listed) == len(doc["keys"]) > 100
    assert {k["key"] for k in doc["keys"]} == {k["key"] for k in listed}


def test_funnel_before_cooking_has_no_binary_figures(corpus_run):
    for row in corpus_run["before"]["families"]:
        assert row["unique_binaries"] is None and row["pso"] is None
        assert row["cached"] == 0 and row["missing"] == row["unique_sources"]
    assert corpus_run["before"]["cooked"] is False


def test_funnel_after_cooking_matches_the_cook(corpus_run):
    cooked, doc, found = corpus_run["cooked"], corpus_run["after"], corpus_run["found"]
    (total,) = [t for t in doc["totals"] if t["shader"] == "pbr"]  # the corpus uses only pbr
    # the funnel counts what the content requires; the cook adds each pass's fallback key
    fallbacks = {k for per_chunk in cooked.fallbacks.values() for k in per_chunk.values()}
    content_jobs = {j for key in found.required.keys for j in cooked.plan.jobs_for(key).values()}
    assert total["unique_sources"] == len(content_jobs) <= cooked.to_json()["jobs"]
    assert total["required"] == cooked.keys - len(fallbacks - {k.text for k in found.required.keys})
    blobs = {cooked.run.results[j].blob for j in content_jobs if cooked.run.results[j].blob}
    assert total["unique_binaries"] == len(blobs)
    for row in [r for r in doc["families"] + doc["totals"] if r["required"]]:  # generated families: no corpus draw
        assert row["cached"] == row["unique_sources"] and row["missing"] == 0 and row["failed"] == 0
        assert 0 < row["unique_binaries"] <= row["unique_sources"]
        assert row["pso"] >= 1
    assert doc["cooked"] is True


def test_pso_counts_distinct_blob_pairs_and_render_states(corpus_run):
    cooked, found = corpus_run["cooked"], corpus_run["found"]
    pairs = set()
    for key, info in found.required.keys.items():
        if key.pass_name != "forward":
            continue
        stages = tuple(sorted((s, cooked.run.results[j].blob) for s, j in cooked.plan.jobs_for(key).items()))
        pairs |= {(stages, json.dumps(state, sort_keys=True)) for state in info.render_states}
    assert rows(corpus_run["after"])["forward"]["pso"] == len(pairs)


def test_levels_and_chunks_add_up(corpus_run):
    doc = corpus_run["after"]
    by_key = {k["key"]: set(k["chunks"]) for k in doc["keys"]}
    for chunk in doc["chunks"]:
        assert chunk["unique"] == sum(1 for chunks in by_key.values() if chunks == {chunk["name"]})
        assert chunk["required"] == sum(1 for chunks in by_key.values() if chunk["name"] in chunks)
    assert sum(c["draws"] for c in doc["chunks"]) == sum(lvl["draws"] for lvl in doc["levels"])
    assert {lvl["name"] for lvl in doc["levels"]} == {"glTF-Asset-Generator", "glTF-Blender-IO", "glTF-Sample-Assets"}


def test_feature_contributions_recount_key_texts(corpus_run):
    doc = corpus_run["after"]
    texts = [k["key"] for k in doc["keys"]]
    for row in doc["features"][:5]:
        dropped = {_drop(t, row["feature"]) for t in texts}
        assert row["if_dynamic"] == len(dropped) and row["saved"] == len(texts) - len(dropped) > 0


def _drop(text: str, feature: str) -> str:
    head, _, body = text.partition("{")
    return head + "{" + ",".join(p for p in body.rstrip("}").split(",") if not p.startswith(feature + "=")) + "}"


def test_contributors_only_here_is_keys_needed_by_one_file(corpus_run):
    doc = corpus_run["after"]
    alone = {}
    for k in doc["keys"]:
        if len(k["files"]) == 1:
            alone[k["files"][0]] = alone.get(k["files"][0], 0) + 1
    top = doc["contributors"]["files"][0]
    assert top["only_here"] == max(alone.values())
    assert {r["file"]: r["only_here"] for r in doc["contributors"]["files"] if r["only_here"]} == alone


# ------------------------------------------------------------------ what-if (pbr, real numbers)
def edited_rules(tmp_path: Path, feature: str, *, derive: str | None = None) -> Path:
    """rules/pbr.yaml with ``feature`` made dynamic (and its derive replaced): an independent what-if."""
    text = RULES.read_text()
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"{feature}:") and "type: bool" in ln)
    text = text.replace(line, line.replace("type: bool,", "type: bool, mode: dynamic,"), 1)
    if derive is not None:
        old = next(ln for ln in text.splitlines() if ln.startswith(f"  {feature}: ") and "type:" not in ln)
        text = text.replace(old, f"  {feature}: {derive}", 1)
    folder = tmp_path / f"rules-{feature}-{derive or 'dynamic'}"
    folder.mkdir()
    (folder / "pbr.yaml").write_text(text)
    return folder


def run_what_if(corpus_run, overrides: dict) -> dict[str, dict]:
    report = corpus_run["report"]
    result = what_if(corpus_run["world"].families, corpus_run["found"].scan, overrides, report.families)
    return {r["pass"]: r for r in result.to_json()["families"]}


def required_with(corpus_run, rules: Path, pass_name: str) -> int:
    keys = required_keys(load_rulesets(rules), corpus_run["found"].scan.draws).keys
    return sum(1 for k in keys if k.pass_name == pass_name)


def test_what_if_with_no_override_is_exactly_the_required_keys(corpus_run):
    found = corpus_run["found"]
    for pass_name, row in run_what_if(corpus_run, {}).items():
        assert row["what_if"]["required"] == sum(1 for k in found.required.keys if k.pass_name == pass_name)
        assert row["what_if"] == row["today"]


def test_what_if_dynamic_matches_an_edited_rule_set(corpus_run, tmp_path):
    what = run_what_if(corpus_run, {"pbr.NORMAL_MAP": "dynamic"})
    rules = edited_rules(tmp_path, "NORMAL_MAP")
    (rs,) = load_rulesets(rules)
    texts = [k["key"] for k in corpus_run["after"]["keys"]]
    for pass_name, row in what.items():
        mine = [t for t in texts if t.startswith(f"pbr/{pass_name}{{")]
        assert row["what_if"]["required"] == len({_drop(t, "NORMAL_MAP") for t in mine})
        assert row["what_if"]["valid"] == count_space(rs, pass_name).valid
        assert row["today"] == {f: rows(corpus_run["after"])[pass_name][f] for f in ("possible", "valid", "required")}
    forward = what["forward"]
    assert forward["what_if"]["required"] == required_with(corpus_run, rules, "forward")
    assert forward["what_if"]["required"] < forward["today"]["required"]
    assert forward["what_if"]["valid"] < forward["today"]["valid"]
    assert forward["what_if"]["possible"] * 2 == forward["today"]["possible"]
    assert what["depth"]["what_if"] == what["depth"]["today"]  # depth never reads NORMAL_MAP


def test_what_if_removed_matches_a_rule_set_that_never_sets_it(corpus_run, tmp_path):
    forward = run_what_if(corpus_run, {"pbr.NORMAL_MAP": "removed", "CLEARCOAT": "dynamic"})["forward"]
    rules = edited_rules(tmp_path, "NORMAL_MAP", derive="false")
    rules_text = (rules / "pbr.yaml").read_text()
    line = next(ln for ln in rules_text.splitlines() if ln.strip().startswith("CLEARCOAT:") and "type:" in ln)
    (rules / "pbr.yaml").write_text(rules_text.replace(line, line.replace("type: bool,", "type: bool, mode: dynamic,")))
    (dynamic,) = load_rulesets(rules)
    assert forward["what_if"]["required"] == required_with(corpus_run, rules, "forward")
    assert forward["what_if"]["required"] < forward["today"]["required"]
    # removed fixes NORMAL_MAP at false: a subset of what dynamic (any value, out of the key) allows
    assert forward["what_if"]["valid"] <= count_space(dynamic, "forward").valid < forward["today"]["valid"]


def test_what_if_cli_shows_today_and_what_if_side_by_side(corpus_run):
    result = cli("report", SAMPLE, "--cache", corpus_run["cache"], "--what-if", "pbr.NORMAL_MAP=dynamic", "-f", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["what_if"]["overrides"] == {"pbr.NORMAL_MAP": "dynamic"}
    forward = next(r for r in doc["what_if"]["families"] if r["pass"] == "forward" and r["shader"] == "pbr")
    sample = [k["key"] for k in doc["keys"] if k["pass"] == "forward" and k["shader"] == "pbr"]
    assert forward["what_if"]["required"] == len({_drop(t, "NORMAL_MAP") for t in sample})
    table = cli("report", SAMPLE, "--cache", corpus_run["cache"], "--what-if", "pbr.NORMAL_MAP=dynamic").stdout
    assert "What if pbr.NORMAL_MAP=dynamic" in table
    bad = cli("report", SAMPLE, "--cache", corpus_run["cache"], "--what-if", "pbr.NORMAL_MAP=maybe")
    assert bad.exit_code == 1 and "FAMILY.FEATURE=dynamic, FAMILY.FEATURE=removed or" in bad.output
    unknown = cli("report", SAMPLE, "--cache", corpus_run["cache"], "--what-if", "NORMAL_MAPS=dynamic")
    assert unknown.exit_code == 1
    assert "no family has a feature 'NORMAL_MAPS' (did you mean 'mtlx.NORMAL_MAP' or 'pbr.NORMAL_MAP'?)" \
        in unknown.stderr


# ------------------------------------------------------------------ budgets
@pytest.fixture
def world(tmp_path) -> Path:
    copy = tmp_path / "world"
    shutil.copytree(SAMPLE, copy)
    return copy


def test_level_budget_in_pipeline_toml_names_the_level_and_files(world, tmp_path):
    cache = tmp_path / "cache"
    forest = len(api.keys(world, level="forest", cache=cache).required.keys)
    (world / "pipeline.toml").write_text(f"[levels.forest]\nbudget = {forest - 1}\n")
    result = cli("report", world, "--cache", cache)
    assert result.exit_code == 1
    line = next(ln for ln in result.stderr.splitlines() if "budget" in ln)
    assert line.startswith("pipeline.toml: error: budget: level forest: ")
    assert f"{forest} required keys exceed the budget of {forest - 1} (+1)" in line
    doc = api.report(world, cache=cache).to_json()
    (check,) = doc["budgets"]
    culprit = check["culprits"][0]
    assert f"{culprit['file']} ({culprit['only_here']})" in line
    (world / culprit["file"]).unlink()  # independent: without that file the level needs that many fewer keys
    assert len(api.keys(world, level="forest", cache=cache).required.keys) == forest - culprit["only_here"]


def test_budget_option_exits_1_only_when_exceeded(world, tmp_path):
    cache = tmp_path / "cache"
    total = len(api.keys(world, cache=cache).required.keys)
    assert cli("report", world, "--cache", cache, "--budget", total).exit_code == 0
    over = cli("report", world, "--cache", cache, "--budget", total - 5, "--format", "json")
    assert over.exit_code == 1
    assert f"--budget: error: budget: world (all): {total} required keys exceed the budget of {total - 5} (+5)" \
        in over.stderr
    (check,) = json.loads(over.stdout)["budgets"]
    assert check["over"] and sum(c["only_here"] for c in check["culprits"]) >= 5
    town = len(api.keys(world, level="town", cache=cache).required.keys)
    assert cli("report", world, "--cache", cache, "--level", "town", "--budget", town - 1).exit_code == 1


# ------------------------------------------------------------------ --since
def test_since_lists_added_and_removed_keys_with_their_files(world, tmp_path):
    cache = tmp_path / "cache"
    old = tmp_path / "old.json"
    assert cli("report", world, "--cache", cache, "-f", "json", "-o", old).exit_code == 0
    before = {k.text for k in api.keys(world, cache=cache).required.keys}
    cabin = world / "forest" / "c02" / "cabin.gltf"
    doc = json.loads(cabin.read_text())
    doc["materials"][0]["alphaMode"] = "MASK"
    cabin.write_text(json.dumps(doc))
    (world / "town" / "square" / "character.glb").unlink()
    after = {k.text for k in api.keys(world, cache=cache).required.keys}
    result = cli("report", world, "--cache", cache, "-f", "json", "--since", old)
    since = json.loads(result.stdout)["since"]
    assert {k["key"] for k in since["added"]} == after - before != set()
    assert {k["key"] for k in since["removed"]} == before - after != set()
    assert all(k["files"] == ["forest/c02/cabin.gltf"] for k in since["added"])
    assert all("town/square/character.glb" in k["files"] for k in since["removed"])
    files = {f["file"]: f for f in since["files"]}
    assert files["forest/c02/cabin.gltf"]["added"] == len(after - before)
    table = cli("report", world, "--cache", cache, "--since", old).stdout
    assert f"{len(after - before)} keys added, {len(before - after)} removed" in table


def test_since_rejects_a_file_that_is_not_a_report(world, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"families": []}')
    result = cli("report", world, "--cache", tmp_path / "cache", "--since", bad)
    assert result.exit_code == 1 and "/keys: error: not a pipeline report" in result.stderr


# ------------------------------------------------------------------ formats
def test_csv_and_table_formats(corpus_run, tmp_path):
    out = tmp_path / "report.csv"
    assert cli("report", SAMPLE, "--cache", corpus_run["cache"], "-f", "csv", "-o", out).exit_code == 0
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert {r["table"] for r in table} == {"family", "level", "chunk"}
    forward = next(r for r in table if r["name"] == "pbr/forward")
    assert int(forward["required"]) <= int(forward["valid"]) <= int(forward["possible"])
    text = cli("report", SAMPLE, "--cache", corpus_run["cache"]).stdout
    assert "Funnel: possible -> valid -> required" in text and "pbr/forward" in text
    assert "Chunks by required keys" in text and "forest/c00" in text


def test_help_explains_the_funnel():
    text = cli("report", "--help").stdout
    for word in ("possible", "valid", "required", "unique sources", "--what-if", "--budget", "--since", "html"):
        assert word in text
