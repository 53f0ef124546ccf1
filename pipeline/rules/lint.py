"""``pipeline rules check``: load rule sets, then lint what loading alone accepts.

Loading already rejects unknown facts and features, values outside a domain, bad
render state, normalize cycles and fact providers that do not load.  Lint adds: every
other plug-in the rule set names resolves (:mod:`pipeline.rules.plugin_check`), features never derived, normalize
rules that can never fire or never change anything, and static features that no
pass reads (a warning; a pass reads its ``features``, and what its ``skip_when`` and
its defines' ``when`` test).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np

from pipeline.errors import Diagnostic, RuleError
from pipeline.rules.compiled import CompiledRule, default_value, format_value
from pipeline.rules.counts import CountLimitError, count_space, truth_table
from pipeline.rules.load import display_path, load_rulesets
from pipeline.rules.models import RuleSet
from pipeline.rules.plugin_check import plugin_problems, world_of


class LintReport(msgspec.Struct):
    """What ``pipeline rules check`` found: the rule sets that loaded and every located problem."""

    folder: str
    rulesets: list[RuleSet] = msgspec.field(default_factory=list)
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def summary(self) -> str:
        features = sum(len(rs.features) for rs in self.rulesets)
        passes = sum(len(rs.passes) for rs in self.rulesets)
        return f"{len(self.rulesets)} families, {features} features, {passes} passes ({self.folder})"

    def to_json(self) -> dict:
        """The ``pipeline rules check --json`` document: each rule set (none when one fails to
        load) with its passes and their key counts, then every problem as a located diagnostic."""
        errors = len(self.errors)
        return {
            "folder": self.folder, "ok": errors == 0,
            "errors": errors, "warnings": len(self.diagnostics) - errors,
            "rulesets": [_ruleset_json(rs) for rs in sorted(self.rulesets, key=lambda r: r.shader)],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _ruleset_json(rs: RuleSet) -> dict:
    passes = {}
    for name in sorted(rs.compiled.passes):
        try:
            space = count_space(rs, name)
            passes[name] = {"possible": space.possible, "valid": space.valid}
        except CountLimitError:  # too large to count exactly: no count rather than a wrong one
            passes[name] = {"possible": None, "valid": None}
    return {"family": rs.shader, "file": rs.path, "kind": rs.kind, "features": len(rs.features), "passes": passes}


def lint_rules(folder: Path, *, materials_dir: Path | None = None) -> LintReport:
    """Load every rule set of ``folder`` and lint it; problems are in the report, not raised."""
    report = LintReport(display_path(Path(folder)))
    try:
        report.rulesets = load_rulesets(Path(folder), materials_dir=materials_dir)
    except RuleError as exc:
        report.diagnostics = list(exc.diagnostics)
        return report
    world = world_of(Path(folder))
    for rs in report.rulesets:
        report.diagnostics.extend(plugin_problems(rs, world) + lint_ruleset(rs))
    return report


def lint_ruleset(rs: RuleSet) -> list[Diagnostic]:
    """Problems of a loaded rule set, in file order."""
    found = _never_derived(rs) + _unread(rs)
    for rule in _unique_rules(rs):
        problem = _rule_problem(rs, rule)
        if problem:
            found.append(Diagnostic(rule.location, problem))
    return sorted(found, key=lambda d: (d.location.line or 0, d.location.col or 0))


def _never_derived(rs: RuleSet) -> list[Diagnostic]:
    compiled = rs.compiled
    return [Diagnostic(compiled.feature_locations[name],
                       f"feature '{name}' is never derived (always {format_value(default_value(domain))})")
            for name, domain in compiled.domains.items()
            if name not in compiled.derive and name not in (compiled.axes or {})]  # the renderer sets an axis


def _unread(rs: RuleSet) -> list[Diagnostic]:
    compiled = rs.compiled
    read = set().union(*(p.features for p in compiled.passes.values()))
    for p in compiled.passes.values():  # a pass's skip_when and its defines' when: read features too
        read |= p.skip.expr.features if p.skip is not None else set()
        read |= set().union(*(d.when.expr.features for d in p.defines.values() if d.when is not None))
    return [Diagnostic(compiled.feature_locations[name], f"feature '{name}' is read by no pass", "warning")
            for name in compiled.domains if name not in read]


def _unique_rules(rs: RuleSet) -> list[CompiledRule]:
    seen: dict[str, CompiledRule] = {}
    for pass_ in rs.compiled.passes.values():
        for rule in pass_.rules:
            if not rule.implicit:  # a feature's when: is not a normalize rule the author wrote
                seen.setdefault(str(rule.location), rule)
    return list(seen.values())


def _rule_problem(rs: RuleSet, rule: CompiledRule) -> str | None:
    """'can never fire' / 'never changes anything', judged over the features the rule touches."""
    if any(rs.compiled.domains[n].open for n in rule.reads()):
        return None  # an open feature's values come from content: only its default is known here
    domains = {n: d.values for n, d in rs.compiled.domains.items()}
    names = tuple(sorted(rule.scope()))
    try:
        fires = truth_table(rule.when, names, domains)
    except CountLimitError:
        return None  # too many combinations to judge within limits: not linted
    if not fires.any():
        return f"normalize rule can never fire: '{rule.when.expr.text}' is never true"
    for index in zip(*np.nonzero(fires)):
        values = {n: domains[n][i] for n, i in zip(names, index)}
        if rule.changes(values):
            return None
    return "normalize rule never changes anything: whenever it fires, its values are already set"
