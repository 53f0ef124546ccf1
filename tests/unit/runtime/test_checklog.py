"""``check-log``: each logged miss against the content's keys now and the cooked outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runtime_helpers import SAMPLE, chunk_index, cook
from pipeline import api
from pipeline.keys.required import RequiredKeys
from pipeline.outputs.contract import DRAW_FIELDS
from pipeline.runtime.checklog import check_log

FORWARD = "pbr/forward"


@pytest.fixture(scope="module")
def cooked(tmp_path_factory):
    """A world of two chunks holding the same file, cooked; the world opened with its cache."""
    tmp = tmp_path_factory.mktemp("checklog")
    for chunk in ("c02", "c03"):
        shutil.copytree(SAMPLE / "forest" / "c02", tmp / "world" / chunk)
    out = cook(tmp / "world", tmp)
    return api.open_world(tmp / "world", cache=tmp / "cache"), out


def run(cooked, tmp_path: Path, lines: list, out: Path | None = None):
    world, cooked_out = cooked
    log = tmp_path / "misses.jsonl"
    log.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    with world.open_store() as store:
        return check_log(world, log, out or cooked_out, lambda c: api.keys(world, chunk=c, store=store)
                         .by_chunk.get(c, RequiredKeys()))


def first_draw(out: Path, chunk: str = "c02") -> dict:
    return chunk_index(out, chunk).draws[0]


def miss(record: dict, chunk: str = "c02", key: str | None = None, label: str = FORWARD, **draw) -> dict:
    return {"key": key if key is not None else record["passes"][label]["key"], "chunk": chunk,
            "draw": {**{f: record[f] for f in DRAW_FIELDS}, **draw}, "pass": label}


def test_a_miss_the_current_cook_holds_is_covered(cooked, tmp_path) -> None:
    record = first_draw(cooked[1])
    result = run(cooked, tmp_path, [miss(record)])
    (verdict,) = result.misses
    assert (verdict.status, verdict.covered, verdict.line) == ("cooked", True, 1)
    assert verdict.content_key == record["passes"][FORWARD]["key"]
    assert result.ok and result.to_json()["covered"] == 1


def test_a_miss_the_outputs_lack_is_stale(cooked, tmp_path) -> None:
    record = first_draw(cooked[1])
    stale = tmp_path / "out"
    shutil.copytree(cooked[1], stale)
    (stale / "c02.json").unlink()
    (verdict,) = run(cooked, tmp_path, [miss(record)], out=stale).misses
    assert (verdict.status, verdict.covered) == ("stale", False)
    assert "cook again" in verdict.reason


def test_a_draw_made_at_run_time_is_covered_only_when_some_chunk_holds_its_key(cooked, tmp_path) -> None:
    record = first_draw(cooked[1])
    result = run(cooked, tmp_path, [miss(record, node=999), miss(record, node=999, key="pbr/forward{NOPE=1}")])
    held, unknown = result.misses
    assert (held.status, held.covered, held.content_key) == ("runtime", True, None)
    assert (unknown.status, unknown.covered) == ("runtime", False)
    assert "not in the content" in held.reason and not result.ok
    assert result.to_json()["uncovered"] == 1


def test_another_key_for_a_content_draw_names_the_features_that_differ(cooked, tmp_path) -> None:
    record = first_draw(cooked[1])
    key = record["passes"][FORWARD]["key"]
    head, body = key[:-1].split("{", 1)
    features = dict(item.split("=", 1) for item in body.split(","))
    name = next(n for n, v in sorted(features.items()) if v in ("0", "1"))
    flipped = {"0": "1", "1": "0"}[features[name]]
    logged = head + "{" + ",".join(f"{n}={flipped if n == name else v}" for n, v in features.items()) + "}"
    (verdict,) = run(cooked, tmp_path, [miss(record, key=logged)]).misses
    assert verdict.status == "runtime" and verdict.content_key == key
    assert [(r["feature"], r["logged"], r["content"]) for r in verdict.rules] == [(name, flipped, features[name])]


def test_a_pass_no_rule_set_gives_the_draw(cooked, tmp_path) -> None:
    record = first_draw(cooked[1])
    (verdict,) = run(cooked, tmp_path, [miss(record, key="pbr/forward{}", label="pbr/nowhere")]).misses
    assert verdict.status == "runtime" and "pbr/nowhere" in verdict.reason and not verdict.covered


def test_unreadable_lines_and_unknown_chunks_are_errors_at_their_line(cooked, tmp_path) -> None:
    record = first_draw(cooked[1])
    result = run(cooked, tmp_path, [miss(record), "{ not json", miss(record, chunk="nowhere/c9")])
    assert [m.line for m in result.misses] == [1]
    assert [e.location.line for e in result.errors] == [2, 3]
    assert all(e.location.file == str(tmp_path / "misses.jsonl") for e in result.errors)
    assert not result.ok and [e["line"] for e in result.to_json()["errors"]] == [2, 3]


def test_an_axis_miss_is_covered_by_an_axis_stale_or_uncovered(cooked, tmp_path) -> None:
    world, out = cooked
    record = first_draw(out)
    base = {k: record[k] for k in DRAW_FIELDS}
    key = record["passes"][FORWARD]["key"]
    line = {"chunk": "c02", "draw": base, "key": key, "pass": FORWARD, "axes": {"QUALITY": "LOW", "SHADOWS": True}}
    [verdict] = run(cooked, tmp_path, [line]).misses
    assert (verdict.status, verdict.covered, verdict.axes) == ("axis", True, {"QUALITY": "LOW", "SHADOWS": True})
    assert verdict.content_key == next(r["key"] for r in record["passes"][FORWARD]["axes"]
                                       if r["values"] == {"QUALITY": "LOW", "SHADOWS": True})
    # the outputs lack that row: stale (the rules allow it)
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    manifest = chunk_index(broken, "c02")
    from pipeline.structs import replace

    from pipeline.outputs import manifest as mf

    draws = tuple({**d, "passes": {p: {**u, "axes": [r for r in u.get("axes", ()) if r["values"]["QUALITY"] != "LOW"]}
                                   if "axes" in u else u for p, u in d["passes"].items()}} for d in manifest.draws)
    mf.chunk_manifest_path(broken, "c02").write_bytes(mf.dump_json(replace(manifest, draws=draws).to_json()))
    [stale] = run(cooked, tmp_path, [line], out=broken).misses
    assert (stale.status, stale.covered) == ("stale", False)
    # a value no rule set has: uncovered, and the check fails
    result = run(cooked, tmp_path, [line | {"axes": {"QUALITY": "ULTRA"}}])
    assert [(m.status, m.covered) for m in result.misses] == [("uncovered", False)] and not result.ok
