"""report.explain: why a permutation key exists (its draws, the rules that set each feature, the normalize
rules that fired); alone or inside a report it reads what the cook recorded instead of planning again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from rules_fixtures import draw, facts, mesh, small_ruleset

from pipeline import api
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeysResult, required_keys
from pipeline.plan import jobs as _jobs
from pipeline.report.explain import (
    ExplainError,
    draw_traces,
    fact_value,
    normalize_uses,
    resolve_key,
    rule_uses,
)
from pipeline.scan.scanner import ScanResult

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "sample_world"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("cooked")
    assert api.cook(SAMPLE, cache=tmp / "cache", out=tmp / "out", jobs=2).errors == []
    return tmp / "cache"


@pytest.fixture
def no_preprocessing(monkeypatch):
    def refuse(tree):
        raise AssertionError("a job the cook recorded was preprocessed again")
    monkeypatch.setattr(_jobs, "default_preprocessor", refuse)


def test_explain_reads_the_cook_s_records(cache: Path, no_preprocessing) -> None:
    found = api.keys(SAMPLE, cache=cache)
    for key, _ in found.required.sorted()[:5]:
        doc = api.explain(SAMPLE, key.hash[:12], cache=cache).to_json()
        assert doc["key"] == key.text and doc["stages"]
        assert all(s["state"] == "cached" and s["blob"] for s in doc["stages"])


def test_a_report_plans_each_key_once_for_its_figures_and_explanations(cache: Path, monkeypatch,
                                                                        no_preprocessing) -> None:
    planned: Counter = Counter()
    add = _jobs.Planner.add

    def counted(self, key, keep=True):
        planned[key] += 1
        return add(self, key, keep)
    monkeypatch.setattr(_jobs.Planner, "add", counted)
    report = api.report(SAMPLE, cache=cache)
    keys = {row.key for row in report.keys}
    assert len(report.explanations) == len(keys) > 0
    assert {key.text for key in planned} == keys and set(planned.values()) == {1}
    for doc in report.explanations.values():
        assert all(s["state"] == "cached" for s in doc["stages"])


# ------------------------------------------------------------------ the explanation's parts, on a small rule set
FEATURES = {"U": {"type": "bool"}, "N": {"type": "bool"}, "T": {"type": "bool", "when": "not U"}}
DERIVE = {"U": "material.unlit", "N": "mesh.normals", "T": "material.doubleSided"}
UNLIT_NORMALS = {"when": "U", "set": {"N": False}, "description": "unlit:\n  no normals"}


@pytest.fixture(scope="module")
def small():
    """Three unlit draws (two with normals and double-sided, one without either) and one lit draw."""
    rs = small_ruleset(FEATURES, derive=DERIVE, normalize=[UNLIT_NORMALS])
    unlit = facts(mesh("NORMAL"), material={"unlit": True, "doubleSided": True})
    plain = facts(mesh(), material={"unlit": True})
    lit = facts(mesh("NORMAL"))
    draws = [draw(unlit, "a.gltf", 0), draw(unlit, "a.gltf", 1), draw(plain, "b.gltf"), draw(lit, "c.gltf")]
    required = required_keys([rs], draws)
    return rs, KeysResult(ScanResult(SAMPLE, [], [], draws, []), required)


def test_a_key_is_found_by_its_text_or_a_prefix_of_its_hash(small) -> None:
    rs, found = small
    keys = list(found.required.keys)
    for key in keys:
        assert resolve_key(f"  {key.text} ", keys, [rs]) == key
        assert resolve_key(key.hash[:8].upper(), keys, [rs]) == key


@pytest.mark.parametrize("query, words", [
    ("t/main{N=1,T=1,U=1}", "no draw needs this key"),
    ("not-a-key!", "not a key: expected shader/pass{NAME=VALUE,...} or a hash prefix"),
])
def test_a_query_that_names_no_required_key_is_located_at_itself(small, query, words) -> None:
    rs, found = small
    with pytest.raises(ExplainError) as info:
        resolve_key(query, found.required.keys, [rs])
    (d,) = info.value.diagnostics
    assert (d.location.file, d.severity) == (query, "error") and words in d.message


def test_a_hash_prefix_matching_no_key_or_several_is_an_error() -> None:
    keys = [PermutationKey("t", "main", (("S", i),)) for i in range(17)]  # 17 hashes: two share a first digit
    firsts = [k.hash[0] for k in keys]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    with pytest.raises(ExplainError) as info:
        resolve_key(shared, keys[::-1], [])  # candidates by key text, whatever order they come in
    head, *notes = info.value.diagnostics
    matching = sorted((k for k in keys if k.hash.startswith(shared)), key=lambda k: k.text)
    assert head.message == f"ambiguous hash prefix: {len(matching)} keys match; give more digits"
    assert [(n.severity, n.message) for n in notes] == [("note", f"candidate {k.hash[:12]} {k.text}")
                                                        for k in matching]
    unused = next(c for c in "0123456789abcdef" if c not in firsts)
    with pytest.raises(ExplainError, match="no required key has a hash starting with this prefix"):
        resolve_key(unused, keys, [])


def test_each_derived_value_is_one_entry_with_the_facts_it_read(small) -> None:
    rs, found = small
    key = next(k for k in found.required.keys if dict(k.features)["U"])
    traces = draw_traces(key, found, [rs])
    assert sorted(t.draws for t in traces) == [1, 2]  # two fact signatures among the key's three draws
    uses = [(u.feature, u.value, u.key_value, u.draws, u.facts) for u in rule_uses(key, traces, rs)]
    assert uses == [
        ("U", True, True, 3, (({"material.unlit": True}, 3),)),
        ("N", True, False, 2, (({"mesh.normals": True}, 2),)),          # derived true, normalized away
        ("N", False, False, 1, (({"mesh.normals": False}, 1),)),
        ("T", True, False, 2, (({"material.doubleSided": True}, 2),)),  # reset by its when:
        ("T", False, False, 1, (({"material.doubleSided": False}, 1),))]


def test_only_the_normalize_rules_that_changed_a_draw_s_key_are_listed(small) -> None:
    rs, found = small
    key = next(k for k in found.required.keys if dict(k.features)["U"])
    uses = normalize_uses(draw_traces(key, found, [rs]), rs)
    # in file order: T's when: (under features) before the normalize rule; each fired for the two draws
    # whose N and T were true, not for the one where they were already false
    assert [(u.set, u.draws, u.description, u.pass_name) for u in uses] == [
        ((("T", False),), 2, "T has a when: that is false: its default", None),
        ((("N", False),), 2, "unlit: no normals", None)]
    lit = next(k for k in found.required.keys if not dict(k.features)["U"])
    assert normalize_uses(draw_traces(lit, found, [rs]), rs) == []


def test_a_fact_value_follows_the_expression_language() -> None:
    draw_facts = facts(mesh("NORMAL", "TEXCOORD_0"), material={"unlit": True})
    assert fact_value(draw_facts, "material.unlit") is True
    assert fact_value(draw_facts, "mesh.texcoordSets") == 1
    assert fact_value(draw_facts, "mesh.attributes['NORMAL']") == {"type": "VEC3", "componentType": 5126}
    assert fact_value(draw_facts, "material.clearcoat.clearcoatFactor") is None  # under an absent block
