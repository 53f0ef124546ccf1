"""rules.normalize: rules to a fixed point, and the load-time proof that they get there."""

from __future__ import annotations

import pytest

from pipeline.errors import Location
from pipeline.rules.compiled import CompiledRule, Located
from pipeline.rules.expr import Domain, Scope, compile_expr
from pipeline.rules.normalize import NormalizeCycle, check_termination, run_normalize

DOMAINS = {"A": Domain("A", "bool", (False, True)), "B": Domain("B", "bool", (False, True))}


def rule(index: int, when: str, **values: bool) -> CompiledRule:
    scope = Scope(facts=False, features=DOMAINS)
    where = Location("rules/t.yaml", 10 + index, 5)
    return CompiledRule(index, None, Located(compile_expr(when, scope), where), values, where)


def test_rules_run_in_order_until_nothing_changes() -> None:
    rules = (rule(0, "A", B=True), rule(1, "B", A=False))
    values, fired = run_normalize(rules, {"A": True, "B": False})
    assert values == {"A": False, "B": True}
    assert [r.index for r in fired] == [0, 1]
    assert run_normalize(rules, {"A": False, "B": False}) == ({"A": False, "B": False}, [])


def test_a_repeated_state_is_a_located_cycle() -> None:
    flip = (rule(0, "A", A=False, B=True), rule(1, "B", A=True, B=False))
    with pytest.raises(NormalizeCycle) as info:
        run_normalize(flip, {"A": True, "B": False})
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.location.line == 10
    assert "the rules at lines 10 and 11 keep changing A, B" in diagnostic.message


def test_termination_is_proven_or_the_cycle_found_at_load() -> None:
    assert check_termination((rule(0, "A", B=True), rule(1, "B", A=True)), DOMAINS) is None  # one value each
    flip = (rule(0, "A", A=False, B=True), rule(1, "B", A=True, B=False))
    found = check_termination(flip, DOMAINS)
    assert found is not None and "never reaches a fixed point" in found.message
