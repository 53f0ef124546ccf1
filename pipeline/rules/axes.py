"""Runtime axes: features whose value the renderer sets, cooked for every allowed value.

A feature declared ``runtime: true`` has no ``derive``: no fact of the content says
whether shadows are on or which quality tier runs.  Its allowed values are its whole
domain, or the ones the world's ``pipeline.toml`` lists under ``[axes]`` (one build per
platform or quality tier restricts them there).  For each pass that reads runtime axes,
every content key is evaluated once per *combination* of their allowed values
(:func:`combinations`); normalize and the feature's ``when:`` still apply, so two
combinations that normalize to one key are one key.  A runtime axis of mode
``dynamic`` is a run-time branch and is never expanded; one of mode ``specialization``
gives one pipeline state per value, not one key.

A static runtime axis at its default value is left out of the key (its text and hash
are those of the family without the axis), so adding an axis to a family keeps every
existing key and only adds the keys of the other values.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from pathlib import Path

from pipeline.errors import ConfigError, Diagnostic, Location
from pipeline.rules.compiled import CompiledPass, default_value, format_value, in_domain
from pipeline.rules.models import RuleSet
from pipeline.structs import replace

Combination = tuple[tuple[str, object], ...]  # ((axis, value), ...) sorted by axis name


def axes_of(rs: RuleSet) -> dict[str, tuple]:
    """Runtime axis -> its allowed values (the domain, or the world's restriction)."""
    return rs.compiled.axes or {}


def pass_axes(rs: RuleSet, pass_: CompiledPass, overrides: Mapping[str, object] | None = None) -> dict[str, tuple]:
    """The runtime axes a pass expands over, with their allowed values: the axes it reads that are not
    dynamic (by the rules, or by a what-if ``dynamic`` override); an override ``("only", values)``
    restricts an axis to those values."""
    out = {}
    for name, values in sorted(axes_of(rs).items()):
        how = (overrides or {}).get(name)
        if name not in pass_.features or rs.compiled.modes[name] == "dynamic" or how in ("dynamic", "removed"):
            continue
        if isinstance(how, tuple) and how and how[0] == "only":
            values = tuple(v for v in values if any(v == w and type(v) is type(w) for w in how[1])) or values[:1]
        out[name] = values
    return out


def combinations(axes: Mapping[str, tuple]) -> list[Combination]:
    """Every combination of the axes' values, in a stable order (the defaults first)."""
    names = sorted(axes)
    return [tuple(zip(names, values)) for values in itertools.product(*(axes[n] for n in names))]


def is_default(rs: RuleSet, name: str, value: object) -> bool:
    default = default_value(rs.compiled.domains[name])
    return value == default and type(value) is type(default)


def key_features(rs: RuleSet, pass_: CompiledPass, normalized: Mapping, skip: Iterable[str] = ()) -> tuple:
    """A key's features: the pass's static features, less ``skip`` and the runtime axes at their default."""
    runtime = axes_of(rs)
    skip = set(skip)
    return tuple((f, normalized[f]) for f in pass_.static
                 if f not in skip and not (f in runtime and is_default(rs, f, normalized[f])))


def multiplier(rs: RuleSet, pass_name: str) -> int:
    """How many combinations a pass's content keys are evaluated for."""
    count = 1
    for values in pass_axes(rs, rs.compiled.passes[pass_name]).values():
        count *= len(values)
    return count


def restrict(rulesets: list[RuleSet], allowed: Mapping[str, tuple], where: Path | str) -> list[RuleSet]:
    """The rule sets with each runtime axis named in ``allowed`` (``pipeline.toml`` ``[axes]``) restricted to
    those values; an axis no family declares, or a value not in its domain, is a located ConfigError."""
    if not allowed:
        return rulesets
    problems = []
    declared = {name for rs in rulesets for name in axes_of(rs)}
    for name, values in sorted(allowed.items()):
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            problems.append(Diagnostic(Location(str(where), pointer=f"/axes/{name}"),
                                       f"'{name}' is not a runtime axis of any rule set (runtime axes: {known})"))
            continue
        if not values:
            problems.append(Diagnostic(Location(str(where), pointer=f"/axes/{name}"),
                                       f"{name} needs at least one value"))
        for rs in rulesets:
            if name in axes_of(rs):
                for value in values:
                    if not in_domain(rs.compiled.domains[name], value):
                        shown = ", ".join(format_value(v) for v in rs.compiled.domains[name].values)
                        problems.append(Diagnostic(Location(str(where), pointer=f"/axes/{name}"),
                                                   f"{value!r} is not a value of {rs.shader}'s {name} "
                                                   f"(values: {shown})"))
    if problems:
        raise ConfigError(list(dict.fromkeys(problems)))
    out = []
    for rs in rulesets:
        axes = axes_of(rs)
        mine = {n: tuple(v for v in axes[n] if any(v == w and type(v) is type(w) for w in allowed[n]))
                for n in axes if n in allowed}
        if not mine:
            out.append(rs)
            continue
        out.append(rs.with_compiled(replace(rs.compiled, axes={**axes, **mine})))
    return out


def combination_json(combination: Combination) -> dict:
    return {name: value for name, value in combination}
