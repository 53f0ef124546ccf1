"""What-if: the funnel as if some features were dynamic or removed, through the same evaluation as keys."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.errors import Diagnostic, Location
from pipeline.keys.required import required_keys
from pipeline.report.errors import ReportError
from pipeline.report.rows import FunnelRow
from pipeline.rules.counts import DEFAULT_MAX_CELLS, Override, count_space
from pipeline.scan.scanner import ScanResult


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
    """The funnel as if the rule sets made some features dynamic (or removed them)."""

    overrides: dict[str, Override]
    rows: tuple[WhatIfRow, ...]

    def to_json(self) -> dict:
        return {"overrides": dict(sorted(self.overrides.items())), "families": [r.to_json() for r in self.rows]}


def what_if(families, scan: ScanResult, overrides: dict[str, Override], today: list[FunnelRow],
            max_cells: int = DEFAULT_MAX_CELLS) -> WhatIf:
    """possible, valid and required of every family and pass under ``overrides``.

    Required keys come from :func:`pipeline.keys.required.required_keys` with the
    overrides, the same evaluation ``pipeline keys`` runs.
    """
    _check_what_if(families, overrides)
    required = required_keys(families.values(), scan.draws, overrides=overrides).keys
    rows = []
    for shader, rs in sorted(families.items()):
        mine = {f: how for f, how in overrides.items() if f in rs.compiled.domains}
        for row in (r for r in today if r.shader == shader):
            space = count_space(rs, row.pass_name, overrides=mine, max_cells=max_cells)
            count = sum(1 for k in required if k.shader == shader and k.pass_name == row.pass_name)
            rows.append(WhatIfRow(shader, row.pass_name, (row.possible, row.valid, row.required),
                                  (space.possible, space.valid, count)))
    return WhatIf(dict(overrides), tuple(rows))


def _check_what_if(families, overrides: dict[str, Override]) -> None:
    known = {f for rs in families.values() for f in rs.compiled.domains}
    for name, how in sorted(overrides.items()):
        if name not in known:
            raise ReportError(Diagnostic(Location.argument("what_if"),
                                         f"{name}={how}: no rule set has a feature {name}"))
        if how not in ("dynamic", "removed"):
            raise ReportError(Diagnostic(Location.argument("what_if"), f"{name}={how}: expected dynamic or removed"))
