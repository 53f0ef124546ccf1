"""The report's runtime axis multipliers: content keys x the axes' combinations = required keys."""

from __future__ import annotations

from rules_fixtures import draw, facts, mesh, pbr

from pipeline.keys.required import required_keys
from pipeline.report.axes import axis_rows


def test_each_axis_multiplies_the_lit_forward_keys() -> None:
    lit = facts(mesh("NORMAL"))
    unlit = facts(mesh("NORMAL"), {"unlit": True})
    required = required_keys([pbr()], [draw(lit), draw(unlit, node=1)])
    [row] = axis_rows({"pbr": pbr()}, required)
    assert (row["shader"], row["pass"], row["content_keys"], row["required"]) == ("pbr", "forward", 2, 5)
    assert row["multiplier"] == 2.5  # the lit key x4, the unlit key x1 (when: not UNLIT)
    assert [(a["axis"], a["values"], a["mode"]) for a in row["axes"]] == [
        ("QUALITY", ["HIGH", "LOW"], "static"), ("SHADOWS", [False, True], "static")]
    assert [a["multiplier"] for a in row["axes"]] == [round(5 / 3, 3)] * 2


def test_a_family_without_axes_has_no_row() -> None:
    assert axis_rows({"pbr": pbr()}, required_keys([pbr()], [])) == []
