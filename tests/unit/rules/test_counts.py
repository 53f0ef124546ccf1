"""Exact valid counts: against brute force (hypothesis), on pbr, and fast on 40 features."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rules_fixtures import pbr, small_ruleset

from pipeline.errors import RuleError
from pipeline.rules.counts import count_space, enumerate_valid
from pipeline.rules.normalize import NormalizeCycle, run_normalize

ENUM = ["RED", "GREEN", "BLUE"]


# ---------------------------------------------------------------- brute force
def brute_force(rs, pass_name: str, overrides: dict | None = None) -> set[tuple]:
    """Distinct keys over every full assignment: normalize, skip, project."""
    overrides = overrides or {}
    compiled = rs.compiled
    pass_ = compiled.passes[pass_name]
    names = list(compiled.domains)
    domains = [compiled.domains[n].values if overrides.get(n) != "removed" else compiled.domains[n].values[:1]
               for n in names]
    rules = tuple(_without(r, {n for n, how in overrides.items() if how == "removed"}) for r in pass_.rules)
    keep = [f for f in pass_.static if f not in overrides]
    keys = set()
    for combo in itertools.product(*domains):
        values, _ = run_normalize(tuple(r for r in rules if r.set), dict(zip(names, combo)))
        if pass_.skip is not None and pass_.skip.expr(None, values):
            continue
        keys.add(tuple((f, values[f]) for f in keep))
    return keys


def _without(rule, removed: set[str]):
    from pipeline.structs import replace

    return replace(rule, set={f: v for f, v in rule.set.items() if f not in removed})


# ---------------------------------------------------------------- random rule sets
@st.composite
def feature_tables(draw):
    count = draw(st.integers(2, 6))
    features = {}
    for i in range(count):
        kind = draw(st.sampled_from(["bool", "int", "enum"]))
        mode = draw(st.sampled_from(["static", "static", "static", "dynamic", "specialization"]))
        spec = {"type": kind, "mode": mode}
        if kind == "int":
            spec["values"] = list(range(draw(st.integers(2, 3))))
        elif kind == "enum":
            spec["values"] = ENUM[:draw(st.integers(2, 3))]
        if mode == "specialization":
            spec["constant_id"] = i
        features[f"F{i}"] = spec
    return features


def _values(spec: dict) -> list:
    return spec.get("values", [False, True])


@st.composite
def atoms(draw, features):
    name = draw(st.sampled_from(sorted(features)))
    spec = features[name]
    if spec["type"] == "bool":
        return draw(st.sampled_from([name, f"not {name}"]))
    value = draw(st.sampled_from(_values(spec)))
    shown = repr(value)
    op = draw(st.sampled_from(["==", "!="] + ([">="] if spec["type"] == "int" else [])))
    return f"{name} {op} {shown}"


@st.composite
def conditions(draw, features):
    parts = draw(st.lists(atoms(features), min_size=1, max_size=2))
    return f" {draw(st.sampled_from(['and', 'or']))} ".join(parts)


@st.composite
def rule_lists(draw, features, max_size=5):
    rules = []
    for _ in range(draw(st.integers(0, max_size))):
        targets = draw(st.lists(st.sampled_from(sorted(features)), min_size=1, max_size=2, unique=True))
        rules.append({"when": draw(conditions(features)),
                      "set": {t: draw(st.sampled_from(_values(features[t]))) for t in targets}})
    return rules


@st.composite
def random_rulesets(draw):
    features = draw(feature_tables())
    names = sorted(features)
    pass_features = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    main = {"features": pass_features, "normalize": draw(rule_lists(features, 2))}
    if draw(st.booleans()):
        main["skip_when"] = draw(conditions(features))
    data = dict(features=features, normalize=draw(rule_lists(features)), passes={"main": main})
    try:
        return small_ruleset(**data)
    except RuleError as exc:  # a generated normalize cycle: rejected at load, as it should be
        assert all("fixed point" in d.message for d in exc.diagnostics), exc
        assume(False)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(random_rulesets())
def test_valid_count_matches_brute_force(rs):
    try:
        expected = brute_force(rs, "main")
    except NormalizeCycle:
        assume(False)
    counted = count_space(rs, "main")
    assert counted.valid == len(expected)
    listed = set(enumerate_valid(rs, "main"))
    assert listed == {tuple(sorted(k)) for k in expected}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(random_rulesets(), st.data())
def test_what_if_overrides_match_brute_force(rs, data):
    names = sorted(rs.compiled.domains)
    overrides = data.draw(st.dictionaries(st.sampled_from(names), st.sampled_from(["dynamic", "removed"]),
                                          max_size=2))
    try:
        expected = brute_force(rs, "main", overrides)
    except NormalizeCycle:
        assume(False)
    assert count_space(rs, "main", overrides=overrides).valid == len(expected)


# ---------------------------------------------------------------- pbr
def test_pbr_depth_counts_are_exact():
    rs = pbr()
    count = count_space(rs, "depth")
    assert count.possible == 3 * 2 * 3 * 2 * 3 * 3 * 5 * 2 * 2 * 2
    # OPAQUE: 30 (skinning 3 x morph 5 x instancing 2); MASK: vertex color 2 x
    # (no base map: 30, base map: UV 1|2 x transform 2 x 30); BLEND is skipped
    assert count.valid == 30 + 2 * (30 + 4 * 30) == len(list(enumerate_valid(rs, "depth")))
    assert count_space(rs, "shadow") == count


def test_pbr_forward_counts_and_what_if():
    rs = pbr()
    full = count_space(rs, "forward")
    assert full.possible == 3 ** 4 * 5 * 2 ** 18 * 2 * 2  # the runtime axes SHADOWS and QUALITY
    assert 0 < full.valid < full.possible
    assert len(list(enumerate_valid(rs, "forward", limit=50))) == 50
    dynamic = count_space(rs, "forward", overrides={"CLEARCOAT": "dynamic"})
    assert dynamic.possible == full.possible // 2 and dynamic.valid < full.valid
    removed = count_space(rs, "forward", overrides={"CLEARCOAT": "removed"})
    assert removed == dynamic  # a bool axis no rule reads: same count either way


def test_unknown_override_is_a_user_error():
    with pytest.raises(RuleError):
        count_space(pbr(), "forward", overrides={"NOPE": "dynamic"})
    with pytest.raises(RuleError):
        count_space(pbr(), "forward", overrides={"CLEARCOAT": "gone"})


# ---------------------------------------------------------------- speed
def forty_features():
    features, normalize = {}, []
    for i in range(40):
        features[f"F{i:02d}"] = {"values": [0, 1, 2]} if i % 5 == 0 else {"type": "bool"}
    for i in range(0, 38):
        a, b, c = f"F{i:02d}", f"F{i + 1:02d}", f"F{i + 2:02d}"
        off = 0 if features[c].get("values") else False
        normalize.append({"when": f"not {a}" if i % 5 else f"{a} == 0", "set": {c: off}})
        if i % 7 == 0:
            normalize.append({"when": f"{a} and {b}" if i % 5 else f"{a} == 2 and {b}", "set": {c: off}})
    return small_ruleset(features, normalize)


def test_forty_features_count_with_small_tables(monkeypatch):
    """Variable elimination, not enumeration: each feature eliminated once, no table beyond a few entries."""
    from pipeline.rules import counts

    rs = forty_features()
    joined: list[int] = []                                     # size of every table built by a join
    eliminate = counts._eliminate

    def counting(factors, name, domains, join, reduce):
        return eliminate(factors, name, domains, lambda tables: _noted(join(tables), joined), reduce)

    monkeypatch.setattr(counts, "_eliminate", counting)
    count = count_space(rs, "main")
    assert count.possible == 3 ** 8 * 2 ** 32
    assert len(joined) == 40 and max(joined) <= 3 * 3 * 2 * 2   # width of the chain, not 3**8 * 2**32
    monkeypatch.undo()
    keys = list(enumerate_valid(rs, "main"))
    assert count.valid == len(set(keys)) == len(keys) > 1
    rules = tuple(r for r in rs.compiled.passes["main"].rules if r.set)
    for key in keys:                                           # every counted key is a fixed point
        assert run_normalize(rules, dict(key))[0] == dict(key)


def _noted(table, sizes: list[int]):
    sizes.append(table.size)
    return table
