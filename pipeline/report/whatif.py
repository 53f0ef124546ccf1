"""What-if: the funnel as if some features were dynamic or removed, through the same evaluation as keys.

A feature is named ``family.FEATURE`` (``pbr.INSTANCING``), the name every report
format prints; a bare ``FEATURE`` is accepted when exactly one family has it.  An
override changes the family it names and no other.  A runtime axis may also be
restricted: ``pbr.QUALITY=only:HIGH`` cooks it for those values only.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from pipeline.errors import Diagnostic, Location
from pipeline.keys.required import required_keys
from pipeline.report.errors import ReportError
from pipeline.report.rows import FunnelRow
from pipeline.rules.axes import axes_of
from pipeline.rules.counts import DEFAULT_MAX_CELLS, Override, count_space
from pipeline.scan.scanner import ScanResult

HOWS = ("dynamic", "removed")


@dataclass(frozen=True)
class WhatIfRow:
    """One family and pass today and under the overrides."""

    shader: str
    pass_name: str
    today: tuple[int, int, int]    # possible, valid, required
    what_if: tuple[int, int, int]

    def to_json(self) -> dict:
        names = ("possible", "valid", "required")
        return {"shader": self.shader, "pass": self.pass_name, "today": dict(zip(names, self.today)),
                "what_if": dict(zip(names, self.what_if))}


@dataclass(frozen=True)
class WhatIf:
    """The funnel as if the rule sets made some features dynamic (or removed them).

    ``overrides`` are by ``family.FEATURE``, whatever form they were given in."""

    overrides: dict[str, Override]
    rows: tuple[WhatIfRow, ...]

    def to_json(self) -> dict:
        return {"overrides": dict(sorted(self.overrides.items())), "families": [r.to_json() for r in self.rows]}


def feature_name(shader: str, feature: str) -> str:
    """The one way a report names a feature: ``family.FEATURE``."""
    return f"{shader}.{feature}"


def what_if(families, scan: ScanResult, overrides: dict[str, Override], today: list[FunnelRow],
            max_cells: int = DEFAULT_MAX_CELLS) -> WhatIf:
    """possible, valid and required of every family and pass under ``overrides``
    (``family.FEATURE`` or a bare ``FEATURE`` -> ``dynamic`` | ``removed``).

    A family no override names keeps today's figures.  Required keys of a named family
    come from :func:`pipeline.keys.required.required_keys` with its overrides, the same
    evaluation ``pipeline keys`` runs.
    """
    resolved = resolve_overrides(families, overrides)
    per_family: dict[str, dict[str, Override]] = {}
    for name, how in resolved.items():
        shader, _, feature = name.partition(".")
        per_family.setdefault(shader, {})[feature] = _only(families[shader], feature, how)
    rows = []
    for shader, rs in sorted(families.items()):
        mine = per_family.get(shader)
        required = required_keys([rs], scan.draws, overrides=mine).keys if mine else None
        for row in (r for r in today if r.shader == shader):
            now = (row.possible, row.valid, row.required)
            if mine is None:
                rows.append(WhatIfRow(shader, row.pass_name, now, now))
                continue
            counted = {f: how for f, how in mine.items() if isinstance(how, str)}  # only: keeps the space
            space = count_space(rs, row.pass_name, overrides=counted, max_cells=max_cells)
            count = sum(1 for k in required if k.pass_name == row.pass_name)
            rows.append(WhatIfRow(shader, row.pass_name, now, (space.possible, space.valid, count)))
    return WhatIf(resolved, tuple(rows))


def resolve_overrides(families, overrides: dict[str, Override]) -> dict[str, Override]:
    """``{"family.FEATURE": how}`` for overrides given as ``family.FEATURE`` or a bare ``FEATURE``.

    A located error (at ``--what-if``) for an unknown family or feature (with "did you
    mean"), a bare name several families have (naming them), a value other than dynamic
    or removed, and one feature given two different values."""
    owners: dict[str, list[str]] = {}
    for shader, rs in sorted(families.items()):
        for feature in rs.compiled.domains:
            owners.setdefault(feature, []).append(shader)
    resolved: dict[str, Override] = {}
    given: dict[str, str] = {}
    for name, how in sorted(overrides.items()):
        item = f"{name}={how}"
        if how not in HOWS and not how.startswith("only:"):
            raise _error(f"{item}: expected dynamic, removed or only:VALUE,... (a runtime axis)")
        full = _qualified(families, owners, name, item)
        if how.startswith("only:"):
            shader, _, feature = full.partition(".")
            _only(families[shader], feature, how, item)
        if full in resolved and resolved[full] != how:
            raise _error(f"{item}: {full} is also given as {given[full]}")
        resolved[full], given[full] = how, item
    return resolved


def _qualified(families, owners: dict[str, list[str]], name: str, item: str) -> str:
    shader, dot, feature = name.partition(".")
    if dot:
        if shader not in families:
            hint = _did_you_mean(shader, sorted(families)) or f" (families: {', '.join(sorted(families))})"
            raise _error(f"{item}: no family {shader!r}{hint}")
        if feature not in families[shader].compiled.domains:
            near = _did_you_mean(feature, list(families[shader].compiled.domains), prefix=f"{shader}.")
            if not near and feature in owners:
                near = f" (did you mean {' or '.join(repr(feature_name(s, feature)) for s in owners[feature])}?)"
            raise _error(f"{item}: family {shader} has no feature {feature!r}{near}")
        return feature_name(shader, feature)
    found = owners.get(name, [])
    if len(found) == 1:
        return feature_name(found[0], name)
    if found:
        names = " or ".join(feature_name(s, name) for s in found)
        raise _error(f"{item}: {len(found)} families have a feature {name} ({', '.join(found)}): name one, "
                     f"as {names}")
    close = difflib.get_close_matches(name, list(owners), n=1, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(feature_name(s, close[0])) for s in owners[close[0]])}?)" \
        if close else ""
    raise _error(f"{item}: no family has a feature {name!r}{hint}")


def _only(rs, feature: str, how: str, item: str = "") -> Override:
    """``only:V1,V2`` of a runtime axis as ``("only", (values...))``; other overrides as they are."""
    if not how.startswith("only:"):
        return how
    if feature not in axes_of(rs):
        raise _error(f"{item}: {rs.shader}.{feature} is not a runtime axis: only: restricts a runtime axis")
    domain = rs.compiled.domains[feature].values
    values = []
    for raw in how[len("only:"):].split(","):
        match = [v for v in domain if (("1" if v else "0") if isinstance(v, bool) else str(v)) == raw.strip()]
        if not match:
            shown = ", ".join(("1" if v else "0") if isinstance(v, bool) else str(v) for v in domain)
            raise _error(f"{item}: {raw.strip()!r} is not a value of {rs.shader}.{feature} (values: {shown})")
        values.append(match[0])
    return ("only", tuple(values))


def _did_you_mean(word: str, candidates: list[str], prefix: str = "") -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f" (did you mean '{prefix}{close[0]}'?)" if close else ""


def _error(message: str) -> ReportError:
    return ReportError(Diagnostic(Location.argument("what_if"), message))
