"""Compiling a validated rule set: every load-time check, and the compiled form it builds.

:func:`compile_ruleset` compiles every expression once and collects every located
problem before raising them together as one :class:`~pipeline.errors.RuleError`:
unknown facts and features, values outside a feature's domain, feature and define
names, specialization constant ids, unknown render states and their values, source and
fragment files missing from the materials folder, derive values a set feature cannot
take, and normalize rules that never reach a fixed point
(:func:`~pipeline.rules.normalize.check_termination`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import Diagnostic, Location, RuleError
from pipeline.fact_providers import ProviderSpec, provided_model, provider_spec
from pipeline.plugin_loader import PluginError, resolve
from pipeline.rules.compiled import (
    RENDER_STATE,
    Compiled,
    CompiledCase,
    CompiledDefine,
    CompiledPass,
    CompiledRule,
    Located,
    default_value,
    in_domain,
)
from pipeline.rules.emit import define_name_ok, define_problem, set_derive_problems
from pipeline.checked import suggest
from pipeline.rules.expr import Domain, ExprError, Scope, compile_expr
from pipeline.rules.models import RuleSet
from pipeline.rules.normalize import check_termination

if TYPE_CHECKING:  # the document a compile locates in: the YAML, or a remembered parse (rules/parsed.py)
    from pipeline.rules.yaml_nodes import YamlDocument

MAX_CONSTANT_ID = 2046  # glslang refuses layout(constant_id = N) for N >= 2047 (layoutSpecConstantIdEnd)


class _Builder:
    """Compiles one validated rule set, collecting every located problem."""

    def __init__(self, rs: RuleSet, doc: YamlDocument, materials_dir: Path | None):
        self.rs, self.doc, self.materials_dir = rs, doc, materials_dir
        self.errors: list[Diagnostic] = []
        self.domains = {n: _domain(n, f) for n, f in rs.features.items()}
        self.providers = self.fact_providers()
        ext = provided_model(self.providers)
        self.facts = Scope(facts=True, features=self.domains, read_features=False, ext=ext)
        self.feats = Scope(facts=False, features=self.domains)
        self.both = Scope(facts=True, features=self.domains, ext=ext)

    def error(self, location: Location, message: str) -> None:
        diagnostic = Diagnostic(location, message)
        if diagnostic not in self.errors:
            self.errors.append(diagnostic)

    def expr(self, text: str, loc: tuple, scope: Scope) -> Located | None:
        node = self.doc.find(loc)
        try:
            compiled = compile_expr(text, scope)
        except ExprError as exc:
            self.error(self.doc.expr_location(node, exc.line, exc.col), exc.message)
            return None
        return Located(compiled, self.doc.expr_location(node))

    def fact_providers(self) -> tuple[ProviderSpec, ...]:
        """The rule set's ``fact_providers:`` resolved (relative to its file) and their declarations
        checked; each one that does not is a located error at its line."""
        base = Path(self.rs.path).parent if self.rs.path else Path.cwd()
        specs: dict[str, ProviderSpec] = {}
        for i, reference in enumerate(self.rs.fact_providers):
            try:
                spec = provider_spec(resolve("facts", reference, base))
            except PluginError as exc:
                self.error(self.doc.at(("fact_providers", i)), f"fact provider plug-in: {exc}")
                continue
            if spec.name in specs:
                self.error(self.doc.at(("fact_providers", i)), f"two fact providers are named '{spec.name}' "
                           f"({specs[spec.name].ref.spec} and {spec.ref.spec}): their facts would share "
                           f"ext.{spec.name}")
                continue
            specs[spec.name] = spec
        return tuple(specs[name] for name in sorted(specs))

    def feature_ref(self, name: str, loc: tuple, *, key: bool) -> bool:
        if name in self.domains:
            return True
        self.error(self.doc.at(loc, key=key), f"unknown feature '{name}'{suggest(name, self.domains)}")
        return False

    def literal(self, name: str, value: Any, loc: tuple) -> bool:
        domain = self.domains[name]
        if in_domain(domain, value):
            return True
        shown = ", ".join(_show(v) for v in domain.values)
        hint = suggest(str(value), [str(v) for v in domain.values]) if isinstance(value, str) else ""
        self.error(self.doc.at(loc), f"{_show(value)} is not a value of {name} (values: {shown}){hint}")
        return False

    # ---- sections
    def build(self) -> Compiled:
        self.check_features()
        self.check_sources()
        select = self.expr(self.rs.select, ("select",), self.facts)
        derive = {n: self.derive(n) for n in self.rs.derive if self.feature_ref(n, ("derive", n), key=True)}
        for name in derive:
            if self.rs.features[name].runtime:
                self.error(self.doc.at(("derive", name), key=True), f"{name} is a runtime axis: the renderer sets "
                           "its value, so it has no derive (drop the entry, or the feature's runtime: true)")
        feature_when, implicit = self.feature_conditions()
        family_rules = self.rules(self.rs.normalize, ("normalize",), None) + implicit
        passes = {name: self.pass_(name, family_rules) for name in self.rs.passes}
        fragments = tuple((f.file, self.expr(f.when, ("fragments", i, "when"), self.feats) if f.when else None)
                          for i, f in enumerate(self.rs.fragments))
        if self.errors:
            raise RuleError(sorted(self.errors, key=lambda d: (d.location.line or 0, d.location.col or 0)))
        return Compiled(
            select=select, domains=self.domains,
            modes={n: f.mode for n, f in self.rs.features.items()},
            constant_ids={n: f.constant_id for n, f in self.rs.features.items() if f.constant_id is not None},
            derive=derive, passes=passes,
            feature_locations={n: self.doc.at(("features", n), key=True) for n in self.rs.features},
            fragments=fragments,
            feature_when=feature_when,
            axes={n: self.domains[n].values for n, f in self.rs.features.items() if f.runtime},
            providers=self.providers,
        )

    def feature_conditions(self) -> tuple[dict[str, Located], tuple[CompiledRule, ...]]:
        """Each ``when:`` of a feature, and the implicit rule resetting it to its default otherwise."""
        conditions, rules = {}, []
        for i, (name, feature) in enumerate(self.rs.features.items()):
            if feature.when is None:
                continue
            loc = ("features", name, "when")
            located = self.expr(feature.when, loc, self.feats)
            if located is None:
                continue
            if name in located.expr.features:
                self.error(located.location, f"the when: of {name} reads {name} itself")
                continue
            conditions[name] = located
            negated = compile_expr(f"not ({feature.when})", self.feats)
            rules.append(CompiledRule(i, None, Located(negated, located.location),
                                      {name: default_value(self.domains[name])}, located.location, implicit=True))
        return conditions, tuple(rules)

    def check_features(self) -> None:
        ids: dict[int, str] = {}
        for name, feature in self.rs.features.items():
            if not _feature_name_ok(name):
                self.error(self.doc.at(("features", name), key=True),
                           f"feature names are UPPER_CASE words (they become #defines): '{name}'")
            if feature.define is not None:
                self.check_define_name(name, feature)
            if feature.constant_id is not None:
                if feature.constant_id > MAX_CONSTANT_ID:
                    self.error(self.doc.at(("features", name, "constant_id")), f"constant_id {feature.constant_id} "
                               f"is out of range: specialization constant ids are 0 to {MAX_CONSTANT_ID} (glslang's "
                               "limit; GLSL allows up to 2147483647, Vulkan 32 bits)")
                elif feature.constant_id in ids:
                    self.error(self.doc.at(("features", name, "constant_id")),
                               f"constant_id {feature.constant_id} is already used by {ids[feature.constant_id]}")
                ids.setdefault(feature.constant_id, name)

    def check_define_name(self, name: str, feature) -> None:
        problem = define_problem(feature)
        if problem:
            self.error(self.doc.at(("features", name, "define")), problem)

    def check_set_derive(self, name: str, located: Located) -> None:
        for at_template, message in set_derive_problems(name, self.rs.features[name], located.expr):
            self.error(self.doc.at(("features", name, "define")) if at_template else located.location, message)

    def check_sources(self) -> None:
        if self.materials_dir is None:
            return
        for stage, source in self.rs.sources.items():
            if not (Path(self.materials_dir) / source.file).is_file():
                self.error(self.doc.at(("sources", stage)),
                           f"{stage} source '{source.file}' not found in the materials folder")
        for i, fragment in enumerate(self.rs.fragments):
            if not (Path(self.materials_dir) / fragment.file).is_file():
                self.error(self.doc.at(("fragments", i)), f"fragment '{fragment.file}' not found in the materials folder")

    def derive(self, name: str) -> tuple[CompiledCase, ...]:
        out = []
        for i, case in enumerate(self.rs.derive[name].cases):
            loc = ("derive", name, i)
            when = self.expr(case.when, loc + ("when",), self.facts) if case.when is not None else None
            value = self.case_value(name, case.value, loc + ("value",))
            out.append(CompiledCase(when, value, self.doc.at(loc)))
        return tuple(out)

    def case_value(self, name: str, value: Any, loc: tuple) -> Any:
        domain = self.domains[name]
        if domain.kind == "set":
            located = self.expr(value, loc, self.facts) if isinstance(value, str) else None
            if located is not None:
                self.check_set_derive(name, located)
            elif isinstance(value, str) is False:
                self.error(self.doc.at(loc), f"set feature {name} is derived from an expression over facts")
            return located
        if in_domain(domain, value) or (domain.kind == "bool" and isinstance(value, bool)):
            return value
        if not isinstance(value, str):
            self.literal(name, value, loc)
            return value
        located = self.expr(value, loc, self.facts)
        if located and domain.kind != "bool" and not domain.open and located.expr.values is not None:
            bad = sorted((v for v in located.expr.values if v is not None and not in_domain(domain, v)), key=repr)
            if bad:
                self.error(located.location, f"{name} can be derived as {_show(bad[0])}, which is not one of "
                                             f"its values ({', '.join(_show(v) for v in domain.values)})")
        return located

    def rules(self, rules: tuple, loc: tuple, pass_name: str | None) -> tuple[CompiledRule, ...]:
        out = []
        for i, rule in enumerate(rules):
            when = self.expr(rule.when, loc + (i, "when"), self.feats)
            ok = all(self.feature_ref(f, loc + (i, "set", f), key=True)
                     and self.literal(f, v, loc + (i, "set", f)) for f, v in rule.set.items())
            if when and ok:
                out.append(CompiledRule(i, pass_name, when, dict(rule.set), self.doc.at(loc + (i,))))
        return tuple(out)

    def pass_(self, name: str, family_rules: tuple[CompiledRule, ...]) -> CompiledPass:
        spec, loc = self.rs.passes[name], ("passes", name)
        if spec.features == "all":
            features = tuple(self.domains)
        else:
            listed = [f for i, f in enumerate(spec.features) if self.feature_ref(f, loc + ("features", i), key=False)]
            features = tuple(f for f in self.domains if f in listed)
        rules = family_rules + self.rules(spec.normalize, loc + ("normalize",), name)
        cycle = check_termination(rules, self.domains)
        if cycle and cycle not in self.errors:
            self.errors.append(cycle)
        skip = self.expr(spec.skip_when, loc + ("skip_when",), self.feats) if spec.skip_when else None
        static = tuple(sorted(f for f in features if self.rs.features[f].mode == "static"))
        return CompiledPass(name, features, static, skip, rules, self.render_state(name), self.defines(name))

    def render_state(self, pass_name: str) -> dict[str, Located]:
        out = {}
        merged = [(("render_state",), self.rs.render_state),
                  (("passes", pass_name, "render_state"), self.rs.passes[pass_name].render_state)]
        for loc, states in merged:
            for key, text in states.items():
                if key not in RENDER_STATE:
                    self.error(self.doc.at(loc + (key,), key=True),
                               f"unknown render state '{key}'{suggest(key, RENDER_STATE)} "
                               f"(known: {', '.join(RENDER_STATE)})")
                    continue
                located = self.expr(text, loc + (key,), self.both)
                if located:
                    self.check_state_values(key, located)
                    out[key] = located
        return out

    def check_state_values(self, key: str, located: Located) -> None:
        allowed = RENDER_STATE[key]
        for v in located.expr.values or ():
            if isinstance(allowed[0], str) and not (isinstance(v, str) and v in allowed):
                self.error(located.location, f"render state {key} can be {_show(v)}; "
                                             f"it must be one of {', '.join(allowed)}")
                return

    def defines(self, pass_name: str) -> dict[str, CompiledDefine]:
        out = {}
        merged = [(("defines",), self.rs.defines), (("passes", pass_name, "defines"), self.rs.passes[pass_name].defines)]
        for loc, defines in merged:
            for key, define in defines.items():
                if not define_name_ok(key):
                    self.error(self.doc.at(loc + (key,), key=True), f"'{key}' is not a valid #define name")
                    continue
                when = self.expr(define.when, loc + (key, "when"), self.feats) if define.when else None
                out[key] = CompiledDefine(define.value, when)
        return out


def _domain(name: str, feature) -> Domain:
    if feature.open:
        return Domain(name, feature.type, (feature.default if feature.type == "int" else "",), open=True)
    return Domain(name, feature.type, tuple(feature.values))


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"'{value}'" if isinstance(value, str) else str(value)


def _feature_name_ok(name: str) -> bool:
    return name.isascii() and name.isidentifier() and name.isupper() and not name.startswith("_")


def compile_ruleset(rs: RuleSet, doc: YamlDocument, materials_dir: Path | None = None) -> Compiled:
    """Compile and check a validated rule set; raise RuleError with every problem."""
    return _Builder(rs, doc, materials_dir).build()
