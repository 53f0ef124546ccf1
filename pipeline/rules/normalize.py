"""Normalize: running a pass's rules to a fixed point, and the proof at load time that it gets there.

:func:`run_normalize` applies the rules in order, repeatedly, until none changes the
key; a state seen twice is a :class:`NormalizeCycle` located at the rules involved.
:func:`check_termination` proves at load time that no assignment cycles: when every
rule setting a feature sets the same value, each feature changes at most once;
otherwise the rules involved are run from every assignment of the features they touch
(up to :data:`CYCLE_CHECK_LIMIT` assignments; beyond, the run-time check remains).
"""

from __future__ import annotations

import itertools
from typing import Any

from pipeline.errors import Diagnostic, RuleError
from pipeline.rules.compiled import CompiledRule, default_value
from pipeline.rules.expr import Domain

CYCLE_CHECK_LIMIT = 1 << 14


class NormalizeCycle(RuleError):
    """Normalize rules keep changing a key and never reach a fixed point."""



# ---------------------------------------------------------------- normalize at run time
def run_normalize(rules: tuple[CompiledRule, ...], values: dict[str, Any],
                  ) -> tuple[dict[str, Any], list[CompiledRule]]:
    """Apply ``rules`` in order, repeatedly, until none changes anything."""
    values, fired, seen = dict(values), [], set()
    while True:
        round_fired = []
        for rule in rules:
            if rule.fires(values) and rule.changes(values):
                values.update(rule.set)
                round_fired.append(rule)
        if not round_fired:
            return values, fired
        fired.extend(round_fired)
        state = tuple(sorted(values.items()))
        if state in seen:
            raise cycle_error(round_fired)
        seen.add(state)


def cycle_error(fired: list[CompiledRule]) -> NormalizeCycle:
    ordered = sorted(set(fired), key=lambda r: (r.location.line or 0))
    lines = " and ".join(str(r.location.line) for r in ordered)
    changing = ", ".join(sorted({f for r in fired for f in r.set}))
    return NormalizeCycle(Diagnostic(ordered[0].location, (
        f"normalize never reaches a fixed point: the rules at lines {lines} keep changing {changing}")))


# ---------------------------------------------------------------- termination at load time
def check_termination(rules: tuple[CompiledRule, ...], domains: dict[str, Domain]) -> Diagnostic | None:
    """A located error when some assignment makes ``rules`` cycle; None when proven safe."""
    conflicting = _conflicting_features(rules)
    if not conflicting:
        return None
    involved = [r for r in rules if r.scope() & _closure(rules, conflicting)]
    names = sorted(set().union(*(r.scope() for r in involved)))
    size = 1
    for n in names:
        size *= len(domains[n].values)
    if size > CYCLE_CHECK_LIMIT:
        return None  # too large to try; run_normalize still detects a cycle at run time
    base = {n: default_value(d) for n, d in domains.items()}
    for combo in itertools.product(*(domains[n].values for n in names)):
        try:
            run_normalize(tuple(involved), {**base, **dict(zip(names, combo))})
        except RuleError as exc:  # a cycle, or a rule that cannot be evaluated
            return exc.diagnostics[0]
    return None


def _conflicting_features(rules: tuple[CompiledRule, ...]) -> set[str]:
    seen: dict[str, set] = {}
    for r in rules:
        for f, v in r.set.items():
            seen.setdefault(f, set()).add((type(v).__name__, v))
    return {f for f, vs in seen.items() if len(vs) > 1}


def _closure(rules: tuple[CompiledRule, ...], start: set[str]) -> set[str]:
    """Features connected to ``start`` through the scopes of the rules."""
    found, changed = set(start), True
    while changed:
        changed = False
        for r in rules:
            if r.scope() & found and not r.scope() <= found:
                found |= r.scope()
                changed = True
    return found
