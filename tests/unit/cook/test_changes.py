"""What a cook changed and why: first keys per job, changed defines, keys gained and lost per chunk."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.compile.scheduler import RunResult
from pipeline.cook.changes import (
    KeysAdded,
    define_changes,
    feature_changes,
    first_keys,
    nearest,
    record_key_changes,
    split_key,
)
from pipeline.keys.key import PermutationKey


def job(source: str, stage: str, **defines: str):
    return SimpleNamespace(request=SimpleNamespace(source=source, stage=stage, defines=tuple(defines.items())))


class Plan:
    def __init__(self, jobs: dict, uses: dict | None = None) -> None:
        self.jobs, self.uses = jobs, uses or {}

    def all_jobs_for(self, key) -> list[str]:
        return self.uses.get(key, [])


def test_split_key_and_feature_changes() -> None:
    assert split_key("pbr/forward{A=1,B=0}") == ("pbr/forward", {"A": "1", "B": "0"})
    assert split_key("pbr/depth{}") == ("pbr/depth", {})
    assert split_key("pbr/depth") == ("pbr/depth", {})
    assert feature_changes("s/p{A=1,B=0}", "s/p{A=1,B=1,C=2}") == {"B": ["0", "1"], "C": [None, "2"]}
    assert feature_changes("s/p{A=1}", "s/p{A=1}") == {}


def test_nearest_is_the_same_pass_with_the_fewest_differences_first_by_text() -> None:
    candidates = ["s/p{A=0,B=0,C=0}", "s/p{A=1,B=1,C=1}", "s/q{A=1,B=0,C=0}", "s/p{A=1,B=0,C=1}",
                  "s/p{A=0,B=0,C=1}"]
    assert nearest("s/p{A=1,B=0,C=0}", candidates) == "s/p{A=0,B=0,C=0}"  # one difference; tie with A=1..C=1
    assert nearest("s/r{A=1}", candidates) is None
    assert nearest("s/p{A=1}", []) is None
    assert nearest("s/p{A=1,D=1}", ["s/p{A=1,B=0}", "s/p{A=0}"]) == "s/p{A=0}"  # 2 differences each: first by text
    split = {}
    assert nearest("s/p{A=1,B=0,C=0}", candidates, split) == "s/p{A=0,B=0,C=0}" and set(split) == set(candidates)
    split["s/p{A=0,B=0,C=0}"] = ("s/other", {})  # a caller's split keys are used as given
    assert nearest("s/p{A=1,B=0,C=0}", candidates, split) != "s/p{A=0,B=0,C=0}"


def test_first_keys_names_each_job_by_its_first_key_in_text_order() -> None:
    b, a = PermutationKey("s", "p", (("X", 2),)), PermutationKey("s", "p", (("X", 1),))
    plan = Plan({}, {a: ["j1", "j2"], b: ["j2", "j3"]})
    assert first_keys([b, a], plan) == {"j1": (a.text, a.hash), "j2": (a.text, a.hash), "j3": (b.text, b.hash)}


def test_define_changes_against_the_nearest_cached_job_of_the_same_source_and_stage() -> None:
    plan = Plan({"new": job("pbr.frag", "fragment", A="1", B="1", C="0"),
                 "old1": job("pbr.frag", "fragment", A="1", B="0", C="0"),
                 "old2": job("pbr.frag", "fragment", A="0", B="0", C="1"),
                 "vert": job("pbr.vert", "vertex", A="0"),
                 "alone": job("mx.frag", "fragment", A="1"),
                 "same": job("pbr.vert", "vertex", A="0")})
    run = RunResult(results={k: object() for k in plan.jobs}, compiled=["new", "alone", "same"])
    assert define_changes(plan, run) == {"new": {"B": ["0", "1"]}}  # alone: nothing cached; same: no change


def test_define_changes_counts_differing_names_not_pairs_and_keeps_the_first_of_a_tie() -> None:
    # against "changed" one define differs (its value); against "added" one too (B absent here): a tie,
    # which the first cached job wins, though "changed" differs in two (name, value) pairs and "added" in one
    plan = Plan({"new": job("pbr.frag", "fragment", A="1"),
                 "changed": job("pbr.frag", "fragment", A="0"),
                 "added": job("pbr.frag", "fragment", A="1", B="0")})
    run = RunResult(results={k: object() for k in plan.jobs}, compiled=["new"])
    assert define_changes(plan, run) == {"new": {"A": ["0", "1"]}}


def test_a_finished_cooks_explanation_is_made_once(monkeypatch) -> None:
    import pipeline.cook.run as run_module

    calls = []
    monkeypatch.setattr(run_module, "define_changes", lambda plan, run: calls.append(1) or {})
    plan = Plan({"new": job("pbr.frag", "fragment", A="1")})
    result = run_module.CookResult(1, 1, 1, 1, plan, RunResult(results={"new": object()}, compiled=["new"]))
    first = result.explain_lines()
    first[0]["reason"] = "changed by a reader"
    assert result.explain_lines()[0]["reason"] == "" and len(calls) == 1


def entry(h: str):
    return SimpleNamespace(hash=h)


def test_record_key_changes_of_a_rewritten_manifest() -> None:
    result = SimpleNamespace(new_chunks=[], keys_added=KeysAdded(), keys_removed=[])
    before = {"s/p{A=0,B=0}": "h1", "s/p{A=1,B=1}": "h2", "s/q{A=0}": "h3"}
    now = {"s/p{A=1,B=1}": entry("h2"), "s/p{A=0,B=1}": entry("h4"), "s/r{A=0}": entry("h5")}
    record_key_changes(result, "c1", before, now)
    assert result.new_chunks == []
    assert result.keys_added == [
        {"chunk": "c1", "key": "s/p{A=0,B=1}", "hash": "h4",
         "nearest": {"key": "s/p{A=0,B=0}", "hash": "h1", "changed": {"B": ["0", "1"]}}},  # a lost key first
        {"chunk": "c1", "key": "s/r{A=0}", "hash": "h5", "nearest": None}]
    assert result.keys_removed == [{"chunk": "c1", "key": "s/p{A=0,B=0}", "hash": "h1"},
                                   {"chunk": "c1", "key": "s/q{A=0}", "hash": "h3"}]


def test_a_kept_key_is_the_nearest_when_no_lost_key_matches() -> None:
    result = SimpleNamespace(new_chunks=[], keys_added=KeysAdded(), keys_removed=[])
    record_key_changes(result, "c1", {"s/p{A=0}": "h1"}, {"s/p{A=0}": entry("h1"), "s/p{A=1}": entry("h2")})
    assert result.keys_added[0]["nearest"]["key"] == "s/p{A=0}" and result.keys_removed == []


def test_a_new_chunk_adds_every_key_without_a_nearest() -> None:
    result = SimpleNamespace(new_chunks=[], keys_added=KeysAdded(), keys_removed=[])
    record_key_changes(result, "c9", None, {"s/p{A=0}": entry("h1")})
    assert result.new_chunks == ["c9"]
    assert result.keys_added == [{"chunk": "c9", "key": "s/p{A=0}", "hash": "h1", "nearest": None}]


def test_keys_added_holds_a_new_chunk_as_its_pairs_and_reads_as_the_items_in_order() -> None:
    result = SimpleNamespace(new_chunks=[], keys_added=KeysAdded(), keys_removed=[])
    record_key_changes(result, "c9", None, {"s/p{A=1}": entry("h2"), "s/p{A=0}": entry("h1")})
    record_key_changes(result, "c1", {"s/p{A=0}": "h1"}, {"s/p{A=0}": entry("h1"), "s/p{A=1}": entry("h2")})
    record_key_changes(result, "c8", None, {})  # a new chunk without keys adds nothing
    assert result.new_chunks == ["c9", "c8"]
    expected = [{"chunk": "c9", "key": "s/p{A=0}", "hash": "h1", "nearest": None},
                {"chunk": "c9", "key": "s/p{A=1}", "hash": "h2", "nearest": None},
                {"chunk": "c1", "key": "s/p{A=1}", "hash": "h2",
                 "nearest": {"key": "s/p{A=0}", "hash": "h1", "changed": {"A": ["0", "1"]}}}]
    added = result.keys_added
    assert len(added) == 3 and list(added) == expected and added == expected and added == KeysAdded(expected)
    assert added[1] == expected[1] and added[-1] == expected[-1] and added[:2] == expected[:2]
    assert added + [{"x": 1}] == [*expected, {"x": 1}]
    assert added != expected[:2] and added != "not a list"
    assert [(k["chunk"], k["key"]) for k in added] == [("c9", "s/p{A=0}"), ("c9", "s/p{A=1}"), ("c1", "s/p{A=1}")]
