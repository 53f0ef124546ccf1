"""Why a permutation key exists: ``pipeline explain WORLD KEY``.

A key is named by its canonical text (``pbr/forward{ALPHA_MODE=MASK,...}``) or by a
prefix of its hash (``82d07957``); an ambiguous prefix is an error listing the
candidates.  The explanation lists

* every draw that needs the key (chunk, file, node, mesh, primitive, material, variant);
* for each feature of the pass, the derive rule that set it: its YAML location,
  case, expression and the values of the facts it read (one entry per distinct
  outcome, with how many draws it covers);
* the normalize rules that fired (family-wide and the pass's own);
* the render states and specialization values that travel beside the key;
* the stage jobs the key projects to, with their blobs when cooked.

Draws are re-evaluated once per fact signature with :func:`pipeline.keys.evaluate.evaluate`,
so every draw's own trace is shown, not just the first one's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable


from pipeline.cache.store import Store
from pipeline.facts import DrawFacts, DrawSource, Frozen, dump
from pipeline.plan.jobs import JobPlan
from pipeline.errors import Diagnostic, Location, PipelineError
from pipeline.keys.evaluate import Trace, evaluate
from pipeline.keys.fold import fold_keys
from pipeline.keys.key import KEY_TEXT, PermutationKey
from pipeline.report.funnel import ReportOptions, job_plan, job_state
from pipeline.rules.expr_runtime import parse_fact_path, resolve_fact_path
from pipeline.rules.models import RuleSet

if TYPE_CHECKING:
    from pipeline.keys.required import KeysResult
    from pipeline.world import World

HEX = re.compile(r"^[0-9a-f]+$")


class ExplainError(PipelineError):
    """The key asked for is not a key, matches nothing the world needs, or is ambiguous."""


# ------------------------------------------------------------------ the explanation
@dataclass(frozen=True)
class RuleUse:
    """How one derive rule (case) set one feature, with the fact values it read.

    ``value`` is what the rule derived; ``key_value`` what the key holds after
    normalize (None for features outside the key: specialization and dynamic).
    ``facts`` lists each distinct set of fact values with the draws it covers.
    """

    feature: str
    mode: str
    value: Any
    key_value: Any
    rule: str | None  # YAML location; None when the feature has no derive entry (its default)
    case: int | None
    expression: str | None
    facts: tuple[tuple[dict, int], ...]

    @property
    def draws(self) -> int:
        return sum(n for _, n in self.facts)

    def to_json(self) -> dict:
        return {"feature": self.feature, "mode": self.mode, "value": self.value, "key_value": self.key_value,
                "rule": self.rule, "case": self.case, "expression": self.expression, "draws": self.draws,
                "facts": [{"values": values, "draws": n} for values, n in self.facts]}


@dataclass(frozen=True)
class NormalizeUse:
    """A normalize rule that changed the key for some of the draws."""

    rule: str
    pass_name: str | None
    when: str
    set: tuple[tuple[str, Any], ...]
    description: str
    draws: int

    def to_json(self) -> dict:
        return {"rule": self.rule, "pass": self.pass_name, "when": self.when, "set": dict(self.set),
                "description": self.description, "draws": self.draws}


@dataclass(frozen=True)
class StageBlob:
    """One stage job of the key and what the cache holds for it."""

    stage: str
    source: str
    job: str
    defines: tuple[tuple[str, str], ...]
    state: str  # cached | failed | missing | unknown (no cache given)
    blob: str | None
    plugins: tuple[str, ...] = ()  # the plug-ins the job went through, in order ("unroll 1.0")

    def to_json(self) -> dict:
        doc = {"stage": self.stage, "source": self.source, "job": self.job, "defines": dict(self.defines),
               "state": self.state, "blob": self.blob}
        return doc | ({"plugins": list(self.plugins)} if self.plugins else {})


@dataclass
class Explanation:
    """Everything ``pipeline explain`` shows about one key."""

    key: PermutationKey
    draws: list[DrawSource]
    rules: list[RuleUse]
    normalize: list[NormalizeUse]
    render_states: list[dict]
    specialization: dict[str, list]
    stages: list[StageBlob] = field(default_factory=list)
    folded: list[dict] = field(default_factory=list)  # the log lines that folded the key into the cook

    def to_json(self) -> dict:
        return {**self.key.to_json(), "draws": [dump(d) for d in self.draws],
                "rules": [r.to_json() for r in self.rules], "normalize": [n.to_json() for n in self.normalize],
                "render_states": self.render_states, "specialization": self.specialization,
                "stages": [s.to_json() for s in self.stages], "folded": self.folded}


def explain_key(world: "World", found: "KeysResult", query: str, store: Store | None = None,
                options: ReportOptions | None = None, planned: tuple[JobPlan, str | None] | None = None) -> Explanation:
    """Explain the key ``query`` (text or hash prefix) among the keys ``found`` in ``world``
    (``planned``: a :func:`job_plan` holding the key, when the caller has one)."""
    folded, extra = fold_keys(world, found)  # keys a log folded in (pipeline.toml include_logs) are explained too
    keys = {**extra, **found.required.keys}
    key = resolve_key(query, keys, world.rulesets)
    info = keys[key]
    traces = draw_traces(key, found, world.rulesets) if key in found.required.keys else []
    ruleset = world.families[key.shader]
    return Explanation(
        key=key, draws=sorted(info.draws, key=_draw_order), rules=rule_uses(key, traces, ruleset),
        normalize=normalize_uses(traces, ruleset), render_states=list(info.render_states),
        specialization=dict(sorted(info.specialization.items())),
        stages=stage_blobs(world, key, store, options or ReportOptions(), planned),
        folded=[f.to_json() for f in folded.keys().get(key.text, [])])


def _draw_order(source: DrawSource) -> tuple:
    return (source.chunk, source.file, source.node, source.mesh, source.primitive, source.variant or "")


# ------------------------------------------------------------------ finding the key
def resolve_key(query: str, keys: Iterable[PermutationKey], rulesets: list[RuleSet]) -> PermutationKey:
    """The required key named by canonical text or by a (unique) hash prefix."""
    text = query.strip()
    required = sorted(keys, key=lambda k: k.text)
    if KEY_TEXT.match(text):
        key = PermutationKey.parse(text, rulesets)
        if key not in set(required):
            raise _error(text, "no draw needs this key (it is not among the required keys)")
        return key
    prefix = text.lower()
    if not HEX.match(prefix):
        raise _error(text, "not a key: expected shader/pass{NAME=VALUE,...} or a hash prefix")
    found = [k for k in required if k.hash.startswith(prefix)]
    if not found:
        raise _error(text, "no required key has a hash starting with this prefix")
    if len(found) > 1:
        raise ExplainError([_diagnostic(text, f"ambiguous hash prefix: {len(found)} keys match; give more digits")]
                           + [_diagnostic(text, f"candidate {k.hash[:12]} {k.text}", "note") for k in found])
    return found[0]


def _diagnostic(text: str, message: str, severity: str = "error") -> Diagnostic:
    return Diagnostic(Location(text or "<key>"), message, severity)


def _error(text: str, message: str) -> ExplainError:
    return ExplainError(_diagnostic(text, message))


# ------------------------------------------------------------------ traces per draw
@dataclass(frozen=True)
class DrawTrace:
    """The trace of one fact signature for the key, and how many draws share it."""

    facts: DrawFacts
    trace: Trace
    draws: int


def draw_traces(key: PermutationKey, found: "KeysResult", rulesets: list[RuleSet]) -> list[DrawTrace]:
    """Re-evaluate every distinct fact signature among the key's draws; keep the key's trace."""
    wanted = set(found.required.keys[key].draws)
    groups: dict[str, list] = {}
    for draw in found.scan.draws:
        if draw.source in wanted:
            groups.setdefault(found.scan.signature(draw), []).append(draw)
    out = []
    for signature in sorted(groups):
        facts = groups[signature][0].facts
        use = next((u for u in evaluate(rulesets, facts) if u.key == key), None)
        if use is not None:
            out.append(DrawTrace(facts, use.trace, len(groups[signature])))
    return out


def rule_uses(key: PermutationKey, traces: list[DrawTrace], ruleset: RuleSet) -> list[RuleUse]:
    """One entry per (feature, derived value, rule, case), with the distinct fact values it read."""
    groups: dict[tuple, Counter] = {}
    for item in traces:
        for name, feature in item.trace.features.items():
            head = (name, feature.value, feature.location, feature.case, feature.expression)
            values = tuple((path, _freeze(fact_value(item.facts, path))) for path in feature.facts)
            groups.setdefault(head, Counter())[values] += item.draws
    in_key, modes = dict(key.features), ruleset.compiled.modes
    uses = [RuleUse(name, modes[name], value, in_key.get(name), rule, case, expr, _fact_sets(counts))
            for (name, value, rule, case, expr), counts in groups.items()]
    order = list(ruleset.compiled.domains)
    return sorted(uses, key=lambda u: (order.index(u.feature), -u.draws, str(u.rule), repr(u.value)))


def _fact_sets(counts: Counter) -> tuple[tuple[dict, int], ...]:
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], repr(kv[0])))
    return tuple(({path: _thaw(v) for path, v in values}, n) for values, n in ordered)


def normalize_uses(traces: list[DrawTrace], ruleset: RuleSet) -> list[NormalizeUse]:
    """The normalize rules that fired, in rule order, with the draws they fired for."""
    counts: Counter = Counter()
    for item in traces:
        for fired in dict.fromkeys(item.trace.normalize):
            counts[fired] += item.draws
    notes = _descriptions(ruleset)
    uses = [NormalizeUse(n.location, n.pass_name, n.when, n.set, notes.get(n.location, ""), c)
            for n, c in counts.items()]
    return sorted(uses, key=lambda u: (_line(u.rule), u.pass_name or ""))


def _descriptions(ruleset: RuleSet) -> dict[str, str]:
    """YAML location of each normalize rule -> its description."""
    out = {}
    for pass_ in ruleset.compiled.passes.values():
        for rule in pass_.rules:
            if rule.implicit:  # a feature's when: (no description of its own)
                out[str(rule.location)] = f"{next(iter(rule.set))} has a when: that is false: its default"
                continue
            spec = ruleset.normalize if rule.pass_name is None else ruleset.passes[rule.pass_name].normalize
            out[str(rule.location)] = " ".join(spec[rule.index].description.split())
    return out


def _line(location: str) -> tuple[int, int]:
    numbers = [int(p) for p in location.split(":")[1:3] if p.isdigit()]
    return (numbers + [0, 0])[0], (numbers + [0, 0])[1]


# ------------------------------------------------------------------ fact values
def fact_value(facts: DrawFacts, path: str) -> Any:
    """The value of a fact path such as ``material.clearcoat.clearcoatFactor`` or ``mesh.attributes['NORMAL']``.

    Follows the expression language: anything under an absent block is None.
    """
    return _plain(resolve_fact_path(facts, parse_fact_path(path)))


def _plain(value: Any) -> Any:
    if isinstance(value, Frozen):
        return dump(value, defaults=False)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    """A hashable stand-in for a JSON value (thawed again by :func:`_thaw` on output)."""
    if isinstance(value, dict):
        return _Frozen(tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class _Frozen(tuple):
    """A frozen dict (keeps a JSON object distinguishable from a list)."""


def _thaw(value: Any) -> Any:
    if isinstance(value, _Frozen):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


# ------------------------------------------------------------------ stage blobs
def stage_blobs(world: "World", key: PermutationKey, store: Store | None, options: ReportOptions,
                planned: tuple[JobPlan, str | None] | None = None) -> list[StageBlob]:
    """The key's stage jobs (as ``pipeline cook`` plans them) and their blobs in the cache."""
    plan, compiler = planned if planned is not None and key in planned[0].stages \
        else job_plan(world, [key], options, store)
    out = []
    for stage, job_key in sorted(plan.jobs_for(key).items()):
        job = plan.own.get(key, {}).get(stage) or plan.jobs[job_key]  # its own defines, not a merged job's
        state = job_state(store, job_key) if store is not None and compiler else None
        out.append(StageBlob(stage, job.request.source, job_key, tuple(job.request.defines),
                             state.state if state else "unknown", state.blob if state else None,
                             tuple(" ".join(filter(None, p[:2])) for p in job.request.plugins)))
    return out
