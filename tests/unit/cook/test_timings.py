"""``pipeline report --timings``: the last cook, or the last N cooks together (``--cooks N``), as text
or one JSON document (``--json``); the timing log keeps the last cooks only (real compiler)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.cook import timings
from pipeline.cook.timings import append_cook, log_path, read_log, summarize
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def two_cooks(tmp_path_factory) -> dict:
    """The sample world cooked, then cooked again after one material edit (one new job)."""
    tmp = tmp_path_factory.mktemp("timings")
    world, cache = tmp / "world", tmp / "cache"
    shutil.copytree(SAMPLE, world)
    with open(world / "pipeline.toml", "a") as f:  # one tier, no shadows: the edit is one new job
        f.write('\n[axes]\nSHADOWS = [false]\nQUALITY = ["HIGH"]\n')
    common = ("--cache", cache, "--out", tmp / "out", "-j", "1", "--json")
    first = json.loads(cli("cook", world, *common).stdout)
    rocks = world / "forest" / "c01" / "rocks.gltf"
    doc = json.loads(rocks.read_text())
    (bark,) = [m for m in doc["materials"] if m.get("name") == "bark"]
    bark["occlusionTexture"] = {"index": 0}
    rocks.write_text(json.dumps(doc))
    second = json.loads(cli("cook", world, *common).stdout)
    assert first["compiled"] > 1 and second["compiled"] == 1
    return {"world": world, "cache": cache, "first": first, "second": second}


def timings_json(two_cooks, *extra) -> dict:
    result = cli("report", two_cooks["world"], "--cache", two_cooks["cache"], "--timings", "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cooks_2_json_shows_both_cooks(two_cooks):
    first, second = two_cooks["first"], two_cooks["second"]
    doc = timings_json(two_cooks, "--cooks", 2, "--top", 1000)
    assert doc["format"] == 1 and doc["cooks_logged"] == 2 and doc["max_cooks"] == timings.MAX_COOKS
    assert [c["jobs"] for c in doc["cooks"]] == [first["compiled"], second["compiled"]]
    assert doc["cooks"][0]["cook"] < doc["cooks"][1]["cook"]
    assert doc["total_runs"] == first["compiled"] + second["compiled"] == len(doc["jobs"])
    assert abs(doc["total_seconds"] - sum(c["seconds"] for c in doc["cooks"])) < 1e-5
    compiled = {line["job"] for line in first["explain"] + second["explain"]}  # 12-character prefixes
    assert {j["job"][:12] for j in doc["jobs"]} == compiled
    for job in doc["jobs"]:
        assert set(job) >= {"job", "key", "family", "source", "stage", "runs", "last_seconds", "mean_seconds",
                            "max_seconds", "ok"}
        assert job["runs"] == 1 and job["last_seconds"] == job["mean_seconds"] == job["max_seconds"] > 0
    means = [j["mean_seconds"] for j in doc["jobs"]]
    assert means == sorted(means, reverse=True)
    families = {f["family"]: f for f in doc["families"]}
    assert set(families) == {"chain", "mtlx", "pbr"}
    assert sum(f["runs"] for f in families.values()) == doc["total_runs"]
    assert families["pbr"]["jobs"] == sum(1 for j in doc["jobs"] if j["family"] == "pbr")


def test_the_default_is_the_last_cook_only(two_cooks):
    doc = timings_json(two_cooks)
    (cook,) = doc["cooks"]
    assert cook["jobs"] == doc["total_runs"] == 1 and doc["cooks_logged"] == 2
    (job,) = doc["jobs"]
    assert job["job"][:12] == two_cooks["second"]["explain"][0]["job"]
    text = cli("report", two_cooks["world"], "--cache", two_cooks["cache"], "--timings").stdout
    assert text.startswith(f"last cook {cook['cook']}: 1 job compiled in ")
    assert "pbr/pbr.frag [fragment] for pbr/forward" in text and "runs" not in text


def test_cooks_2_as_text_lists_both_cooks(two_cooks):
    doc = timings_json(two_cooks, "--cooks", 2)
    text = cli("report", two_cooks["world"], "--cache", two_cooks["cache"], "--timings", "--cooks", 2).stdout
    assert text.startswith(f"last 2 cooks (timing log: 2 cooks, keeps the last {timings.MAX_COOKS}): "
                           f"{doc['total_runs']} compiles in ")
    assert all(c["cook"] in text for c in doc["cooks"]) and "runs  job" in text
    more = cli("report", two_cooks["world"], "--cache", two_cooks["cache"], "--timings", "--cooks", 3).stdout
    assert more.startswith("last 2 cooks")  # more than the log holds: all of it, and says how many


def test_cooks_without_timings_is_one_line(tmp_path):
    result = cli("report", SAMPLE, "--cache", tmp_path / "cache", "--cooks", 2)
    assert result.exit_code == 1
    (line,) = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert "--cooks" in line and "needs --timings" in line


def row(cook: str, job: str, seconds: float) -> dict:
    return {"cook": cook, "job": job, "key": f"pbr/forward{{{job}}}", "key_hash": job, "family": "pbr",
            "source": "pbr/pbr.frag", "stage": "fragment", "seconds": seconds, "ok": True}


def test_a_job_run_in_several_cooks_has_runs_last_mean_and_max():
    rows = [row("c1", "a", 1.0), row("c1", "b", 0.5), row("c2", "a", 3.0), row("c3", "b", 0.25)]
    summary = summarize(rows, cooks=2)
    assert [c["cook"] for c in summary.cooks] == ["c2", "c3"]
    assert {j["job"]: (j["runs"], j["last_seconds"]) for j in summary.jobs} == {"a": (1, 3.0), "b": (1, 0.25)}
    (a, b) = summarize(rows, cooks=3).jobs
    assert (a["job"], a["runs"], a["last_seconds"], a["mean_seconds"], a["max_seconds"]) == ("a", 2, 3.0, 2.0, 3.0)
    assert (b["job"], b["runs"], b["last_seconds"], b["mean_seconds"], b["max_seconds"]) == ("b", 2, 0.25, 0.375, 0.5)
    (pbr,) = summarize(rows, cooks=3).families
    assert (pbr["jobs"], pbr["runs"], pbr["seconds"], pbr["max_seconds"]) == (2, 4, 4.75, 3.0)


def test_the_log_keeps_the_last_cooks(tmp_path, monkeypatch):
    monkeypatch.setattr(timings, "MAX_COOKS", 3)
    for n in range(6):
        append_cook(tmp_path, [row(f"cook{n}", f"job{n}.{i}", 0.1) for i in range(n + 1)])
        assert len({r["cook"] for r in read_log(tmp_path)}) == min(n + 1, 3)
    assert [r["job"] for r in read_log(tmp_path)] == [f"job{n}.{i}" for n in (3, 4, 5) for i in range(n + 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["timings.jsonl", "timings.jsonl.lock"]  # no temp left


def test_the_log_keeps_whole_cooks_within_its_line_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(timings, "MAX_LINES", 10)
    for n in range(5):
        append_cook(tmp_path, [row(f"cook{n}", f"job{i}", 0.1) for i in range(4)])
        lines = log_path(tmp_path).read_bytes().splitlines()
        assert len(lines) <= 10 and len(lines) % 4 == 0
    assert [r["cook"] for r in read_log(tmp_path)] == ["cook3"] * 4 + ["cook4"] * 4


def test_a_torn_line_is_dropped_when_the_log_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setattr(timings, "MAX_COOKS", 2)
    append_cook(tmp_path, [row("cook0", "a", 0.1)])
    with open(log_path(tmp_path), "ab") as f:
        f.write(b'{"cook":"cook1","job":"b","sec')  # a cook killed mid-write
    append_cook(tmp_path, [row("cook2", "c", 0.1)])
    assert [r["job"] for r in read_log(tmp_path)] == ["a", "c"]
    assert log_path(tmp_path).read_bytes().endswith(b"\n") and len(log_path(tmp_path).read_bytes().splitlines()) == 2
