"""Exact ``possible`` and ``valid`` counts of a family's pass, without enumerating.

``possible`` is the product of the domains of the static features the pass reads.
``valid`` is the number of distinct keys normalize can produce: the projections,
onto those features, of the full assignments that no rule changes (a fixed point of
the family and pass normalize rules) and that ``skip_when`` does not skip.

An assignment is a fixed point iff every rule is a no-op on it, i.e. for every rule
and every ``F: v`` it sets: ``not when or F == v``.  Each of those is a small
boolean table over the features the rule reads plus ``F``.  Counting the keys is
then variable elimination over those tables: features outside the key (other
passes' features, specialization and dynamic ones) are eliminated first by
existential projection (OR), the key's features by summing (DP over the
constraint graph, min-size order).  The cost grows with the width of the
constraint graph, not with the number of features: 40 features count in well
under a second.

What-if overrides: ``{'F': 'dynamic'}`` takes ``F`` out of the key (it still exists
at run time); ``{'F': 'removed'}`` deletes the axis: ``F`` is fixed at its default
and rules no longer set it.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Iterator

import msgspec
import numpy as np

from pipeline.errors import Diagnostic, Location, RuleError
from pipeline.rules.compiled import Located, default_value
from pipeline.rules.expr import EvalError
from pipeline.rules.models import RuleSet

Override = str  # 'dynamic' | 'removed'


DEFAULT_MAX_CELLS = 2**20  # limits.max_count_cells: largest table one count builds


class CountLimitError(RuleError):
    """Counting a pass's valid keys would build a table over the limit: the count is not exact, so none is given."""


OPEN = "open"  # the count of a pass with an open feature in its key: not a finite number


class OpenSpaceError(RuleError):
    """A pass's keys cannot be enumerated: a feature of its key has an open domain."""


class SpaceCount(msgspec.Struct, frozen=True):
    possible: int | str  # an int, or OPEN
    valid: int | str


def open_features(ruleset: RuleSet, pass_name: str) -> tuple[str, ...]:
    """The static features of the pass's key whose domain is open (computed from facts)."""
    compiled = ruleset.compiled
    return tuple(f for f in compiled.passes[pass_name].static if compiled.domains[f].open)


def add_counts(counts) -> int | str:
    """The sum of counts, OPEN when any is."""
    counts = list(counts)
    return OPEN if OPEN in counts else sum(counts)


class Factor(msgspec.Struct, frozen=True):
    """A table over ``names`` (axis i indexes the values of names[i])."""

    names: tuple[str, ...]
    table: np.ndarray


class Space(msgspec.Struct):
    """The constraint problem of one pass."""

    domains: dict[str, tuple]
    keep: tuple[str, ...]
    factors: list[Factor]
    where: Location = Location("")
    max_cells: int = DEFAULT_MAX_CELLS

    def check(self, names, what: str) -> None:
        """Refuse a table over ``names`` larger than the limit (time and memory stay bounded)."""
        cells = math.prod(len(self.domains[n]) for n in names)
        if cells > self.max_cells:
            raise CountLimitError(Diagnostic(self.where, f"{what}: a table of {cells} cells over {len(names)} "
                                             f"features, over limits.max_count_cells ({self.max_cells}); "
                                             "the valid keys are not counted"))


def count_space(ruleset: RuleSet, pass_name: str, *, overrides: dict[str, Override] | None = None,
                max_cells: int = DEFAULT_MAX_CELLS) -> SpaceCount:
    """Exact possible and valid key counts of one pass (optionally with what-if overrides).

    Raises :class:`CountLimitError` (located at the rule, or the rule set) when an exact
    count would build a table of more than ``max_cells`` cells.
    """
    if [f for f in open_features(ruleset, pass_name) if f not in (overrides or {})]:
        return SpaceCount(OPEN, OPEN)
    space = build_space(ruleset, pass_name, overrides or {}, max_cells)
    possible = math.prod(len(space.domains[n]) for n in space.keep)
    return SpaceCount(possible, _count(space))


def enumerate_valid(ruleset: RuleSet, pass_name: str, limit: int | None = None,
                    max_cells: int = DEFAULT_MAX_CELLS) -> Iterator[tuple]:
    """The features of every valid key of the pass, ``((name, value), ...)`` sorted by name, in domain order (at most ``limit``)."""
    found = open_features(ruleset, pass_name)
    if found:
        raise OpenSpaceError(Diagnostic(Location(ruleset.path or ruleset.shader), (
            f"{ruleset.shader}/{pass_name}: the keys cannot be enumerated: {', '.join(found)} "
            f"{'has an open domain' if len(found) == 1 else 'have open domains'} (values computed from facts)")))
    space = build_space(ruleset, pass_name, {}, max_cells)
    factors = _project(space)
    keys = _search(space, factors)
    for values in itertools.islice(keys, limit):
        yield tuple(sorted(values.items()))


# ---------------------------------------------------------------- the constraint problem
def build_space(ruleset: RuleSet, pass_name: str, overrides: dict[str, Override],
                max_cells: int = DEFAULT_MAX_CELLS) -> Space:
    compiled = ruleset.compiled
    _check_overrides(ruleset, overrides)
    pass_ = compiled.passes[pass_name]
    removed = {f for f, how in overrides.items() if how == "removed"}
    domains = {n: ((default_value(d),) if n in removed else d.values) for n, d in compiled.domains.items()}
    keep = tuple(f for f in pass_.static if f not in overrides)
    factors = []
    for rule in pass_.rules:
        targets = {f: v for f, v in rule.set.items() if f not in removed}
        factors.extend(_rule_factors(rule.when, targets, domains, max_cells))
    if pass_.skip is not None:
        reads = tuple(sorted(pass_.skip.expr.features))
        factors.append(Factor(reads, ~truth_table(pass_.skip, reads, domains, max_cells)))
    return Space(domains, keep, factors, Location(ruleset.path or ruleset.shader), max_cells)


def _check_overrides(ruleset: RuleSet, overrides: dict[str, Override]) -> None:
    for name, how in overrides.items():
        if name not in ruleset.compiled.domains:
            raise RuleError.at(ruleset.path, f"what-if: unknown feature '{name}'")
        if how not in ("dynamic", "removed"):
            raise RuleError.at(ruleset.path, f"what-if: {name}={how}: expected 'dynamic' or 'removed'")


def _rule_factors(when: Located, targets: dict[str, Any], domains: dict[str, tuple],
                  max_cells: int) -> list[Factor]:
    """``not when or F == v`` for each target F: v, each over reads(when) + F."""
    reads = tuple(sorted(when.expr.features))
    fires = truth_table(when, reads, domains, max_cells)
    out = []
    for name, value in targets.items():
        names = reads if name in reads else reads + (name,)
        equal = np.array([_same(v, value) for v in domains[name]])
        table = ~_expand(fires, reads, names, domains) | _expand(equal, (name,), names, domains)
        out.append(Factor(names, table))
    return out


def _same(a: Any, b: Any) -> bool:
    return a == b and type(a) is type(b)


def truth_table(located: Located, reads: tuple[str, ...], domains: dict[str, tuple],
                max_cells: int = DEFAULT_MAX_CELLS) -> np.ndarray:
    """The expression's value over every combination of the features it reads (at most ``max_cells``)."""
    shape = tuple(len(domains[n]) for n in reads)
    if math.prod(shape) > max_cells:
        raise CountLimitError(Diagnostic(located.location, f"'{located.expr.text}' reads {len(reads)} features: "
                                         f"{math.prod(shape)} combinations, over limits.max_count_cells "
                                         f"({max_cells}); the valid keys are not counted"))
    table = np.zeros(shape, dtype=bool)
    for index in np.ndindex(*shape):
        values = {n: domains[n][i] for n, i in zip(reads, index)}
        try:
            table[index] = bool(located.expr(None, values))
        except EvalError as exc:
            raise RuleError(Diagnostic(located.location, f"cannot evaluate '{located.expr.text}': {exc}")) from None
    return table


def _expand(table: np.ndarray, names: tuple[str, ...], target: tuple[str, ...], domains: dict) -> np.ndarray:
    """``table`` over ``names`` broadcast to the axes of ``target`` (a superset)."""
    order = sorted(range(len(names)), key=lambda i: target.index(names[i]))
    moved = np.transpose(table, order) if names else table
    shape = [len(domains[n]) if n in names else 1 for n in target]
    return np.broadcast_to(np.reshape(moved, shape), [len(domains[n]) for n in target])


# ---------------------------------------------------------------- variable elimination
def _count(space: Space) -> int:
    factors = [Factor(f.names, f.table.astype(object)) for f in _project(space)]
    free = [n for n in space.keep if not any(n in f.names for f in factors)]
    for name in _order(space.keep, factors, space.domains):
        factors = _eliminate(factors, name, space, _product, lambda t, axis: t.sum(axis=axis))
    total = math.prod(len(space.domains[n]) for n in free)
    for f in factors:
        total *= int(f.table.sum())
    return total


def _project(space: Space) -> list[Factor]:
    """Eliminate every feature outside the key by OR: tables over key features only."""
    hidden = [n for n in space.domains if n not in space.keep]
    factors = list(space.factors)
    for name in _order(hidden, factors, space.domains):
        factors = _eliminate(factors, name, space, _conjunction, lambda t, axis: t.any(axis=axis))
    return factors


def _order(names: Any, factors: list[Factor], domains: dict) -> list[str]:
    """Greedy min-size elimination order over the interaction graph."""
    scopes = [set(f.names) for f in factors]
    remaining, order = set(names), []
    while remaining:
        def cost(n: str) -> int:
            joined = set().union(*(s for s in scopes if n in s)) or {n}
            return math.prod(len(domains[m]) for m in joined)

        best = min(sorted(remaining), key=cost)
        joined = set().union(*(s for s in scopes if best in s)) - {best}
        scopes = [s for s in scopes if best not in s] + [joined]
        remaining.discard(best)
        order.append(best)
    return order


def _eliminate(factors: list[Factor], name: str, space: Space, join: Any, reduce: Any) -> list[Factor]:
    touching = [f for f in factors if name in f.names]
    if not touching:
        return factors
    domains = space.domains
    rest = [f for f in factors if name not in f.names]
    names = tuple(sorted(set().union(*(f.names for f in touching))))
    space.check(names, f"eliminating {name}")
    table = join([_expand(f.table, f.names, names, domains) for f in touching])
    reduced = reduce(table, names.index(name))
    return rest + [Factor(tuple(n for n in names if n != name), np.asarray(reduced))]


def _conjunction(tables: list[np.ndarray]) -> np.ndarray:
    return functools.reduce(np.logical_and, tables)


def _product(tables: list[np.ndarray]) -> np.ndarray:
    return functools.reduce(np.multiply, tables)


# ---------------------------------------------------------------- enumeration
def _search(space: Space, factors: list[Factor]) -> Iterator[dict[str, Any]]:
    """Depth-first over the key features, checking each table once its scope is assigned."""
    order = list(space.keep)
    position = {n: i for i, n in enumerate(order)}
    ready: dict[int, list[Factor]] = {}
    for f in factors:
        last = max((position[n] for n in f.names), default=-1)
        ready.setdefault(last, []).append(f)
    if any(not bool(f.table) for f in ready.get(-1, [])):
        return
    yield from _assign(space, order, ready, {}, 0)


def _assign(space: Space, order: list[str], ready: dict, index: dict[str, int], depth: int) -> Iterator[dict]:
    if depth == len(order):
        yield {n: space.domains[n][i] for n, i in index.items()}
        return
    name = order[depth]
    for i in range(len(space.domains[name])):
        index[name] = i
        if all(f.table[tuple(index[n] for n in f.names)] for f in ready.get(depth, [])):
            yield from _assign(space, order, ready, index, depth + 1)
    del index[name]
