"""Evaluating rule sets over one draw's facts: its keys, render states and traces.

For each draw the rule sets whose ``select`` holds derive every feature from the
facts, normalize (family rules, then the pass's own, to a fixed point), and give one
:class:`PermutationKey` per pass that is not skipped: the pass's *static* features
with their normalized values.  Specialization and dynamic features travel beside
the key (:class:`KeyUse`), as does the render state.

Every feature value can be traced to the derive case (YAML location and fact
paths) that set it and the normalize rules that changed it.  Over many draws, see
:mod:`pipeline.keys.required`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import msgspec

from pipeline.digest import canonical_bytes
from pipeline.errors import Diagnostic, RuleError
from pipeline.facts import DrawFacts
from pipeline.keys.key import PermutationKey, interned
from pipeline.rules.compiled import (
    RENDER_STATE,
    CompiledPass,
    CompiledRule,
    FeatureValue,
    default_value,
    format_value,
    in_domain,
    Located,
)
from pipeline.rules.axes import combinations, key_features, pass_axes
from pipeline.rules.emit import TemplateError, render_set
from pipeline.rules.models import RuleSet
from pipeline.rules.normalize import run_normalize
from pipeline.structs import replace

AXES = "@axes"  # in a binding's values: the runtime axis combinations ({axis: value} each) the binding serves
Overrides = Mapping[str, Any]  # feature -> "dynamic" | "removed" | ("only", values) (what-if)


# ---------------------------------------------------------------- traces
class FeatureTrace(msgspec.Struct, frozen=True):
    """Which derive case set a feature, where it is written and which facts it read."""

    value: FeatureValue
    location: str | None  # None: the feature has no derive entry (its default)
    case: int | None
    expression: str | None
    facts: tuple[str, ...]

    def to_json(self) -> dict:
        return {"value": self.value, "rule": self.location, "case": self.case, "expression": self.expression,
                "facts": list(self.facts)}


class NormalizeTrace(msgspec.Struct, frozen=True):
    """A normalize rule that changed the key."""

    location: str
    pass_name: str | None
    when: str
    set: tuple[tuple[str, FeatureValue], ...]

    def to_json(self) -> dict:
        return {"rule": self.location, "pass": self.pass_name, "when": self.when, "set": dict(self.set)}


@dataclass(frozen=True)
class Trace:
    features: dict[str, FeatureTrace]
    normalize: tuple[NormalizeTrace, ...] = ()

    def to_json(self) -> dict:
        return {"features": {n: t.to_json() for n, t in sorted(self.features.items())},
                "normalize": [n.to_json() for n in self.normalize]}


# ---------------------------------------------------------------- evaluation
@dataclass
class KeyUse:
    """One key a draw needs, with what travels beside it."""

    key: PermutationKey
    render_state: dict[str, str | bool]
    specialization: dict[str, tuple[int, FeatureValue]]
    dynamic: dict[str, FeatureValue]
    trace: Trace
    axes: tuple[dict, ...] = ()  # the runtime axis combinations this use serves ({axis: value} each)
    _binding: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def binding_values(self) -> tuple[dict, dict[str, list]]:
        """The specialization values a draw binds this key with (its runtime axis combinations under
        ``@axes``), and the same values as one-value lists; made once per use, shared by every draw
        bound with it (nobody changes them)."""
        if self._binding is None:
            spec = {n: v for n, (_, v) in self.specialization.items()}
            if self.axes:
                spec[AXES] = list(self.axes)
            self._binding = (spec, {n: [v] for n, (_, v) in self.specialization.items()})
        return self._binding


class Evaluation(list):
    """The keys one draw's facts need (a list of :class:`KeyUse`), and ``errors``: the located
    errors of the families and passes whose rules could not be evaluated for these facts."""

    def __init__(self, uses: Iterable[KeyUse] = (), errors: Iterable[Diagnostic] = ()):
        super().__init__(uses)
        self.errors = list(errors)


def run_expression(located: Located, facts: DrawFacts | None, features: dict | None = None) -> Any:
    """Evaluate a rule expression; an evaluation error is a located RuleError."""
    return located.run(facts, features)


def derive_features(rs: RuleSet, facts: DrawFacts) -> tuple[dict[str, FeatureValue], dict[str, FeatureTrace]]:
    """Every feature of the family from one draw's facts, with its trace."""
    values, traces = {}, {}
    compiled = rs.compiled
    for name, domain in compiled.domains.items():
        cases = compiled.derive.get(name)
        if cases is None:
            values[name] = default_value(domain)
            traces[name] = FeatureTrace(values[name], None, None, None, ())
            continue
        values[name], traces[name] = _derive_one(rs, name, cases, facts)
    return values, traces


def _derive_one(rs: RuleSet, name: str, cases: tuple, facts: DrawFacts) -> tuple[FeatureValue, FeatureTrace]:
    domain = rs.compiled.domains[name]
    read: set[str] = set()
    for i, case in enumerate(cases):
        if case.when is not None:
            read |= case.when.expr.facts
            if not run_expression(case.when, facts):
                continue
        value, where, text = case.value, case.location, None
        if isinstance(value, Located):
            read |= value.expr.facts
            where, text = value.location, value.expr.text
            value = _coerce(rs, name, run_expression(value, facts), value)
        trace = FeatureTrace(value, str(where), i if len(cases) > 1 else None,
                             text or (case.when.expr.text if case.when else None), tuple(sorted(read)))
        return value, trace
    fallback = default_value(domain)
    return fallback, FeatureTrace(fallback, str(cases[-1].location), None, None, tuple(sorted(read)))


def _coerce(rs: RuleSet, name: str, value: Any, located: Located) -> FeatureValue:
    domain = rs.compiled.domains[name]
    if domain.kind == "bool":
        return bool(value)
    if domain.kind == "set":
        feature = rs.features[name]
        try:
            return render_set(feature.define or name, feature.key_name, value)
        except TemplateError as exc:
            raise RuleError(Diagnostic(located.location, f"{name}: {exc}")) from None
    if domain.open and value is None:
        return default_value(domain)  # an unknown count (no such accessor): the default
    if in_domain(domain, value):
        return value
    if domain.open:
        raise RuleError(Diagnostic(located.location, f"{name} derived as {value!r}; an open int feature needs "
                                                     "an integer"))
    shown = ", ".join(format_value(v) for v in domain.values)
    raise RuleError(Diagnostic(located.location, f"{name} derived as {value!r}, which is not one of its values "
                                                 f"({shown})"))


def evaluate(rulesets: Iterable[RuleSet], facts: DrawFacts, overrides: Overrides | None = None) -> Evaluation:
    """The keys one draw needs: every family whose select holds, every pass not skipped.

    ``overrides`` evaluates the rule sets as if some features were changed (the
    report's what-if): ``dynamic`` leaves the feature out of the key after
    normalize; ``removed`` fixes it at its default and no rule sets it any more.

    A rule that fails for these facts costs only its own family (a failing ``select`` or
    derive) or pass (normalize, ``skip_when``, render state): every other key is still in
    the result, and the failures are its ``errors``.
    """
    uses = Evaluation()
    errors = uses.errors
    for rs in rulesets:
        try:
            if not run_expression(rs.compiled.select, facts):
                continue
            values, traces = derive_features(rs, facts)
        except RuleError as exc:
            errors.extend(exc.diagnostics)
            continue
        mine = {f: how for f, how in (overrides or {}).items() if f in rs.compiled.domains}
        removed = {f for f, how in mine.items() if how == "removed"}
        values.update({f: default_value(rs.domain(f)) for f in removed})
        for pass_ in rs.compiled.passes.values():
            try:
                uses.extend(_pass_uses(rs, pass_, facts, values, traces, mine, removed))
            except RuleError as exc:
                errors.extend(exc.diagnostics)
    return uses


def _pass_uses(rs: RuleSet, pass_: CompiledPass, facts: DrawFacts, values: dict, traces: dict,
               overrides: Overrides, removed: set[str]) -> list[KeyUse]:
    axes = pass_axes(rs, pass_, overrides) if rs.compiled.axes else {}
    if not axes:
        use = _pass_use(rs, pass_, facts, values, traces, overrides, removed)
        return [] if use is None else [use]
    merged: dict[tuple, KeyUse] = {}
    for combination in combinations(axes):
        use = _pass_use(rs, pass_, facts, values | dict(combination), traces, overrides, removed)
        if use is None:
            continue
        same = (use.key, canonical_bytes(use.render_state), canonical_bytes(use.specialization))
        if same in merged:
            merged[same].axes += (dict(combination),)
        else:
            use.axes = (dict(combination),)
            merged[same] = use
    return list(merged.values())


def _pass_use(rs: RuleSet, pass_: CompiledPass, facts: DrawFacts, values: dict, traces: dict,
              overrides: Overrides, removed: set[str]) -> KeyUse | None:
    rules = _without(pass_.rules, removed) if removed else pass_.rules
    normalized, fired = run_normalize(rules, values)
    if pass_.skip is not None and run_expression(pass_.skip, None, normalized):
        return None
    modes, ids = rs.compiled.modes, rs.compiled.constant_ids
    out = [f for f, how in overrides.items() if how in ("dynamic", "removed")] if overrides else ()
    key = interned(PermutationKey(rs.shader, pass_.name, key_features(rs, pass_, normalized, out)))
    trace = Trace(
        {f: traces[f] for f in pass_.features},
        tuple(NormalizeTrace(str(r.location), r.pass_name, r.when.expr.text, tuple(sorted(r.set.items())))
              for r in fired),
    )
    return KeyUse(
        key=key,
        render_state=_render_state(pass_, facts, normalized),
        specialization={f: (ids[f], normalized[f]) for f in pass_.features if modes[f] == "specialization"},
        dynamic={f: normalized[f] for f in pass_.features if modes[f] == "dynamic"},
        trace=trace,
    )


def _without(rules: tuple[CompiledRule, ...], removed: set[str]) -> tuple[CompiledRule, ...]:
    """Normalize rules with the removed features taken out of what they set."""
    kept = []
    for rule in rules:
        targets = {f: v for f, v in rule.set.items() if f not in removed}
        if targets:
            kept.append(replace(rule, set=targets) if len(targets) < len(rule.set) else rule)
    return tuple(kept)


def _render_state(pass_: CompiledPass, facts: DrawFacts, values: dict) -> dict[str, str | bool]:
    state = {}
    for name, located in sorted(pass_.render_state.items()):
        value = run_expression(located, facts, values)
        allowed = RENDER_STATE[name]
        value = bool(value) if allowed == (False, True) else value
        if value not in allowed:
            raise RuleError(Diagnostic(located.location, f"render state {name} is {value!r}; it must be one of "
                                                         f"{', '.join(map(str, allowed))}"))
        state[name] = value
    return state
