"""Fallback keys: the key a pass declares as always cooked (``passes.<name>.fallback``).

A fallback is the pass's static features at their defaults, overridden by the values
the rule set gives, then normalized by the pass's rules (a runtime axis at its default: the
renderer's other axis values draw through the same fallback).  Features that are not static
(specialization constants, dynamic uniforms) are chosen per draw at run time, so one
fallback key can draw any draw of its family whose own key is missing.
"""

from __future__ import annotations

from pipeline.errors import Diagnostic, Location, RuleError
from pipeline.keys.key import PermutationKey
from pipeline.rules.axes import key_features
from pipeline.rules.compiled import default_value, format_value, in_domain
from pipeline.rules.models import RuleSet
from pipeline.rules.normalize import run_normalize


def fallback_keys(rs: RuleSet) -> dict[str, PermutationKey]:
    """Pass name -> its fallback key, for the passes that declare one."""
    keys = {}
    for name, declared in rs.passes.items():
        if declared.fallback is not None:
            keys[name] = fallback_key(rs, name)
    return keys


def fallback_key(rs: RuleSet, pass_name: str) -> PermutationKey:
    compiled = rs.compiled
    pass_ = compiled.passes[pass_name]
    given = rs.passes[pass_name].fallback or {}
    values = {n: default_value(d) for n, d in compiled.domains.items()}
    for name, value in given.items():
        if name not in pass_.static:
            raise _error(rs, pass_name, f"fallback names '{name}', which is not a static feature of the pass")
        if not in_domain(compiled.domains[name], value):
            raise _error(rs, pass_name, f"fallback {name}={format_value(value)} is not a value of {name}")
        values[name] = value
    normalized, _ = run_normalize(pass_.rules, values)
    return PermutationKey(rs.shader, pass_name, key_features(rs, pass_, normalized))


def _error(rs: RuleSet, pass_name: str, message: str) -> RuleError:
    return RuleError(Diagnostic(Location(rs.path or rs.shader, pointer=f"/passes/{pass_name}/fallback"), message))
