"""Permutation keys: evaluating rule sets over draw facts.

For each draw the rule sets whose ``select`` holds derive every feature from the
facts, normalize (family rules, then the pass's own, to a fixed point), and give one
:class:`PermutationKey` per pass that is not skipped: the pass's *static* features
with their normalized values.  Specialization and dynamic features travel beside
the key (:class:`KeyUse`), as does the render state.

:func:`required_keys` evaluates once per distinct projection of the facts onto
the paths the rules read, not once per draw.  Every feature value can be traced to the derive case (YAML location and
fact paths) that set it and the normalize rules that changed it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from pipeline.digest import canonical_bytes, stable_hash
from pipeline.errors import Diagnostic, Location, PipelineError, RuleError
from pipeline.rules.compiled import RENDER_STATE, default_value, in_domain
from pipeline.rules.expr import EvalError, buffer_facts, get_attr, get_item, suggest
from pipeline.rules.models import CompiledPass, Located, RuleSet, run_normalize
from pipeline.scan.facts import Draw, DrawFacts, DrawSource

FeatureValue = bool | int | str
KEY_TEXT = re.compile(r"^(?P<shader>[a-z][a-z0-9_]*)/(?P<pass>[A-Za-z0-9_]+)\{(?P<features>[^{}]*)\}$")


class KeyTextError(PipelineError):
    """A key's text form cannot be parsed against the loaded rule sets."""


def format_value(value: FeatureValue) -> str:
    """Bools print as 0/1, ints and enum values as themselves."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


@dataclass(frozen=True, order=True)
class PermutationKey:
    """(shader, pass, sorted static feature values): one compiled variant of a family."""

    shader: str
    pass_name: str
    features: tuple[tuple[str, FeatureValue], ...]

    @functools.cached_property
    def text(self) -> str:
        inner = ",".join(f"{name}={format_value(value)}" for name, value in self.features)
        return f"{self.shader}/{self.pass_name}{{{inner}}}"

    @functools.cached_property
    def hash(self) -> str:
        return stable_hash({"shader": self.shader, "pass": self.pass_name, "features": dict(self.features)})

    def __str__(self) -> str:
        return self.text

    def value(self, name: str) -> FeatureValue:
        return dict(self.features)[name]

    def to_json(self) -> dict:
        return {"key": self.text, "hash": self.hash, "shader": self.shader, "pass": self.pass_name,
                "features": dict(self.features)}

    @classmethod
    def parse(cls, text: str, rulesets: Iterable[RuleSet]) -> "PermutationKey":
        """The key whose canonical text is ``text``; every feature of the pass must be given."""
        match = KEY_TEXT.match(text.strip())
        if not match:
            raise _key_error(text, "not a key: expected shader/pass{NAME=VALUE,...}")
        by_shader = {rs.shader: rs for rs in rulesets}
        rs = by_shader.get(match["shader"])
        if rs is None:
            raise _key_error(text, f"unknown shader '{match['shader']}'{suggest(match['shader'], by_shader)}")
        passes = rs.compiled.passes
        if match["pass"] not in passes:
            raise _key_error(text, f"unknown pass '{match['pass']}' of {rs.shader}{suggest(match['pass'], passes)}")
        values = _parse_features(text, rs, passes[match["pass"]], match["features"])
        return cls(rs.shader, match["pass"], tuple(sorted(values.items())))


def _key_error(text: str, message: str) -> KeyTextError:
    return KeyTextError(Diagnostic(Location(text.strip() or "<key>"), message))


def _parse_features(text: str, rs: RuleSet, pass_: CompiledPass, body: str) -> dict[str, FeatureValue]:
    values: dict[str, FeatureValue] = {}
    for item in filter(None, body.split(",")):
        name, _, raw = item.partition("=")
        if name not in pass_.static:
            raise _key_error(text, f"'{name}' is not a static feature of {rs.shader}/{pass_.name}"
                                   f"{suggest(name, pass_.static)}")
        values[name] = _parse_value(text, rs, name, raw)
    missing = [f for f in pass_.static if f not in values]
    if missing:
        raise _key_error(text, f"missing feature(s): {', '.join(missing)}")
    return values


def _parse_value(text: str, rs: RuleSet, name: str, raw: str) -> FeatureValue:
    domain = rs.domain(name)
    parsed: Any = raw
    if domain.kind == "bool":
        parsed = {"0": False, "1": True, "false": False, "true": True}.get(raw.lower(), raw)
    elif domain.kind == "int" and re.fullmatch(r"-?\d+", raw):
        parsed = int(raw)
    if not in_domain(domain, parsed):
        raise _key_error(text, f"'{raw}' is not a value of {name} "
                               f"(values: {', '.join(format_value(v) for v in domain.values)})")
    return parsed


# ---------------------------------------------------------------- traces
@dataclass(frozen=True)
class FeatureTrace:
    """Which derive case set a feature, where it is written and which facts it read."""

    value: FeatureValue
    location: str | None  # None: the feature has no derive entry (its default)
    case: int | None
    expression: str | None
    facts: tuple[str, ...]

    def to_json(self) -> dict:
        return {"value": self.value, "rule": self.location, "case": self.case, "expression": self.expression,
                "facts": list(self.facts)}


@dataclass(frozen=True)
class NormalizeTrace:
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


def _run(located: Located, facts: DrawFacts | None, features: dict | None = None) -> Any:
    try:
        return located.expr(facts, features)
    except EvalError as exc:
        raise RuleError(Diagnostic(located.location, f"cannot evaluate '{located.expr.text}': {exc}")) from None


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
            if not _run(case.when, facts):
                continue
        value, where, text = case.value, case.location, None
        if isinstance(value, Located):
            read |= value.expr.facts
            where, text = value.location, value.expr.text
            value = _coerce(rs, name, _run(value, facts), value)
        trace = FeatureTrace(value, str(where), i if len(cases) > 1 else None,
                             text or (case.when.expr.text if case.when else None), tuple(sorted(read)))
        return value, trace
    fallback = default_value(domain)
    return fallback, FeatureTrace(fallback, str(cases[-1].location), None, None, tuple(sorted(read)))


def _coerce(rs: RuleSet, name: str, value: Any, located: Located) -> FeatureValue:
    domain = rs.compiled.domains[name]
    if domain.kind == "bool":
        return bool(value)
    if in_domain(domain, value):
        return value
    shown = ", ".join(format_value(v) for v in domain.values)
    raise RuleError(Diagnostic(located.location, f"{name} derived as {value!r}, which is not one of its values "
                                                 f"({shown})"))


def evaluate(rulesets: Iterable[RuleSet], facts: DrawFacts) -> list[KeyUse]:
    """The keys one draw needs: every family whose select holds, every pass not skipped."""
    uses = []
    for rs in rulesets:
        if not _run(rs.compiled.select, facts):
            continue
        values, traces = derive_features(rs, facts)
        for pass_ in rs.compiled.passes.values():
            use = _pass_use(rs, pass_, facts, values, traces)
            if use is not None:
                uses.append(use)
    return uses


def _pass_use(rs: RuleSet, pass_: CompiledPass, facts: DrawFacts, values: dict, traces: dict) -> KeyUse | None:
    normalized, fired = run_normalize(pass_.rules, values)
    if pass_.skip is not None and _run(pass_.skip, None, normalized):
        return None
    modes, ids = rs.compiled.modes, rs.compiled.constant_ids
    key = PermutationKey(rs.shader, pass_.name, tuple((f, normalized[f]) for f in pass_.static))
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


def _render_state(pass_: CompiledPass, facts: DrawFacts, values: dict) -> dict[str, str | bool]:
    state = {}
    for name, located in sorted(pass_.render_state.items()):
        value = _run(located, facts, values)
        allowed = RENDER_STATE[name]
        value = bool(value) if allowed == (False, True) else value
        if value not in allowed:
            raise RuleError(Diagnostic(located.location, f"render state {name} is {value!r}; it must be one of "
                                                         f"{', '.join(map(str, allowed))}"))
        state[name] = value
    return state


# ---------------------------------------------------------------- over many draws
@dataclass
class KeyInfo:
    """Who needs a key and with which pipeline states and specialization values."""

    draws: list[DrawSource] = field(default_factory=list)
    render_states: list[dict] = field(default_factory=list)
    specialization: dict[str, list] = field(default_factory=dict)
    trace: Trace | None = None
    bindings: list[tuple[DrawSource, dict, dict]] = field(default_factory=list)  # per draw: render state, spec values

    def add(self, use: KeyUse, sources: list[DrawSource]) -> None:
        self.draws.extend(sources)
        spec = {n: v for n, (_, v) in use.specialization.items()}
        self.bindings.extend((source, use.render_state, spec) for source in sources)
        self._add_states([use.render_state], {n: [v] for n, (_, v) in use.specialization.items()})
        if self.trace is None:
            self.trace = use.trace

    def merge(self, other: "KeyInfo") -> None:
        """Take in another KeyInfo of the same key (from another chunk, say)."""
        self.draws.extend(other.draws)
        self.bindings.extend(other.bindings)
        self._add_states(other.render_states, other.specialization)
        if self.trace is None:
            self.trace = other.trace

    def _add_states(self, render_states: list[dict], specialization: dict[str, list]) -> None:
        for state in render_states:
            if state not in self.render_states:
                self.render_states.append(state)
                self.render_states.sort(key=canonical_bytes)
        for name, values in specialization.items():
            seen = self.specialization.setdefault(name, [])
            for value in values:
                if value not in seen:
                    seen.append(value)
                    seen.sort(key=repr)


@dataclass
class RequiredKeys:
    keys: dict[PermutationKey, KeyInfo] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    signatures_evaluated: int = 0

    def sorted(self) -> list[tuple[PermutationKey, KeyInfo]]:
        return sorted(self.keys.items(), key=lambda item: item[0].text)

    @classmethod
    def union(cls, parts: Iterable["RequiredKeys"]) -> "RequiredKeys":
        """The keys of several parts (chunks) together: draws, states and diagnostics merged."""
        total, seen = cls(), set()
        for part in parts:
            total.signatures_evaluated += part.signatures_evaluated
            _add_unique(total.diagnostics, part.diagnostics, seen)
            for key, info in part.keys.items():
                total.keys.setdefault(key, KeyInfo()).merge(info)
        return total

    def to_json(self) -> dict:
        keys = [{**key.to_json(), "render_state": info.render_states, "specialization": info.specialization,
                 "draws": len(info.draws)} for key, info in self.sorted()]
        return {"keys": keys, "errors": [d.to_json() for d in self.diagnostics]}


Memo = dict  # projected facts -> list[KeyUse] | RuleError, shared across calls


def required_keys(rulesets: Iterable[RuleSet], draws: Iterable[Draw], memo: Memo | None = None) -> RequiredKeys:
    """Every key the draws need; rules run once per distinct *projected* fact signature.

    Draws are grouped by the values of the fact paths the rule sets read (see
    :class:`FactProjection`), so draws that differ only in facts no rule reads (a
    colour factor, the chunk name) share one evaluation.  Pass the same ``memo`` to
    several calls (one per chunk, say) to share evaluations between them.
    """
    rulesets = list(rulesets)
    memo = {} if memo is None else memo
    result = RequiredKeys()
    seen: set[str] = set()
    for projected, group in _group(rulesets, draws).items():
        uses = memo.get(projected)
        if uses is None:
            result.signatures_evaluated += 1
            try:
                uses = evaluate(rulesets, group[0].facts)
            except RuleError as exc:
                uses = exc
            memo[projected] = uses
        if isinstance(uses, RuleError):
            _add_unique(result.diagnostics, uses.diagnostics, seen)
            continue
        if not uses:
            _add_unique(result.diagnostics, [_no_family(d) for d in _first_per_file(group)], seen)
        sources = [d.source for d in group]
        for use in uses:
            result.keys.setdefault(use.key, KeyInfo()).add(use, sources)
    return result


def _group(rulesets: list[RuleSet], draws: Iterable[Draw]) -> dict[tuple, list[Draw]]:
    """Draws by projected facts; each distinct facts object is projected once."""
    project = FactProjection.of(rulesets)
    by_object: dict[int, tuple] = {}
    groups: dict[tuple, list[Draw]] = {}
    for draw in draws:
        facts = draw.facts
        projected = by_object.get(id(facts))
        if projected is None:
            projected = by_object[id(facts)] = project(facts)
        groups.setdefault(projected, []).append(draw)
    return groups


def _first_per_file(group: list[Draw]) -> list[Draw]:
    return list({d.source.file: d for d in reversed(group)}.values())[::-1]


_PATH_STEP = re.compile(r"\.(\w+)|\[('[^']*'|-?\d+)\]")


class FactProjection:
    """The values of the fact paths a set of rule sets reads, as one hashable tuple.

    Rule expressions can only observe facts through these paths (``has(X)`` reads
    ``mesh.attributes['X']``), so two draws with equal projections get equal keys,
    render states and traces.
    """

    def __init__(self, paths: Iterable[str]):
        self.paths = tuple(sorted(paths))
        self._steps = tuple(self._parse(p) for p in self.paths)

    @classmethod
    def of(cls, rulesets: list[RuleSet]) -> "FactProjection":
        return cls(frozenset().union(*(rs.compiled.fact_paths() for rs in rulesets)))

    @staticmethod
    def _parse(path: str) -> tuple:
        root = re.match(r"\w+", path).group(0)
        steps: list[tuple[bool, Any]] = [(False, root)]
        for attr, item in _PATH_STEP.findall(path[len(root):]):
            steps.append((False, attr) if attr else (True, item[1:-1] if item.startswith("'") else int(item)))
        return tuple(steps)

    def __call__(self, facts: DrawFacts) -> tuple:
        return tuple(_hashable(self._resolve(facts, steps)) for steps in self._steps)

    @staticmethod
    def _resolve(facts: DrawFacts, steps: tuple) -> Any:
        value: Any = facts
        for is_item, name in steps:
            value = get_item(value, name) if is_item else get_attr(value, name)
        return value


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        dumped = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        return canonical_bytes(dumped)


def _no_family(draw: Draw) -> Diagnostic:
    src = draw.source
    pointer = f"/meshes/{src.mesh}/primitives/{src.primitive}"
    return Diagnostic(Location(src.file, pointer=pointer), "no shader family selects this draw", "warning")


def _add_unique(into: list[Diagnostic], items: list[Diagnostic], seen: set[str]) -> None:
    for d in items:
        if str(d) not in seen:
            seen.add(str(d))
            into.append(d)


def optional_facts(rulesets: Iterable[RuleSet]) -> frozenset[str]:
    """The optional buffer facts the rule sets read (the scanner computes only these)."""
    read = frozenset().union(*(rs.compiled.fact_paths() for rs in rulesets))
    return frozenset(f for f in buffer_facts() if f in read)


# ---------------------------------------------------------------- defines
def stage_defines(ruleset: RuleSet, key: PermutationKey) -> list[tuple[str, str]]:
    """The #define preamble of a key (docs/architecture.md, "the define convention").

    ``PASS_<NAME> 1`` first, then every feature in name order, then the extra defines
    in name order.  Static features the pass does not read are defined to their
    default value (the pass does not care, so it gets the cheapest variant);
    specialization and dynamic features it does not read get no spec id.
    """
    compiled = ruleset.compiled
    pass_ = compiled.passes[key.pass_name]
    values = {n: default_value(d) for n, d in compiled.domains.items()} | dict(key.features)
    out = [(f"PASS_{key.pass_name.upper()}", "1")]
    for name in sorted(compiled.domains):
        mode = compiled.modes[name] if name in pass_.features else _outside_mode(compiled.modes[name])
        out.extend(_feature_defines(ruleset, name, mode, values[name]))
    for name, define in sorted(pass_.defines.items()):
        if define.when is None or _run(define.when, None, values):
            out.append((name, format_value(define.value)))
    return out


def _outside_mode(mode: str) -> str:
    return "static" if mode == "static" else "dynamic"


def _feature_defines(ruleset: RuleSet, name: str, mode: str, value: FeatureValue) -> list[tuple[str, str]]:
    domain = ruleset.domain(name)
    out = []
    if domain.kind == "enum":
        out = [(f"{name}_{v}", str(i)) for i, v in enumerate(domain.values)]
    if mode == "specialization":
        out.append((f"{name}_SPEC_ID", str(ruleset.compiled.constant_ids[name])))
    elif mode == "static":
        shown = str(domain.values.index(value)) if domain.kind == "enum" else format_value(value)
        out.append((name, shown))
    return out
