"""``--history DIR``: earlier JSON reports as a trend."""

from __future__ import annotations

import json

from pipeline.report.history import load_history, point


def report(required: list[int], binaries: list[int | None] | None = None, timestamp: str | None = None,
           size: dict | None = None) -> dict:
    binaries = binaries or [None] * len(required)
    return {"totals": [{"required": r, "unique_binaries": b} for r, b in zip(required, binaries)],
            "provenance": {"timestamp": timestamp}, "sizes": {"total": size} if size else None}


def test_point_sums_the_totals_of_a_report() -> None:
    p = point(report([3, 4], [2, 5], "2026-01-01T00:00:00Z", {"bytes": 100, "compressed": 40}), "r")
    assert p == {"label": "r", "timestamp": "2026-01-01T00:00:00Z", "required": 7, "binaries": 7,
                 "bytes": 100, "compressed": 40}


def test_point_of_an_uncooked_or_sparse_report_leaves_unknown_figures_none() -> None:
    assert point(report([3, 4], [2, None]), "r")["binaries"] is None  # one family not cooked: not known
    assert point({"totals": ["junk", {"required": None}]}, "x") == {
        "label": "x", "timestamp": None, "required": 0, "binaries": None, "bytes": None, "compressed": None}


def test_load_history_orders_by_timestamp_skips_other_files_and_ends_with_the_current(tmp_path) -> None:
    (tmp_path / "b.json").write_text(json.dumps(report([1], timestamp="2026-01-01T00:00:00Z")))
    (tmp_path / "a.json").write_text(json.dumps(report([2], timestamp="2026-02-01T00:00:00Z")))
    (tmp_path / "c.json").write_text(json.dumps(report([5])))  # no timestamp: first
    (tmp_path / "broken.json").write_text("{ not json")
    (tmp_path / "other.json").write_text(json.dumps({"totals": "not a list"}))
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "notes.txt").write_text(json.dumps(report([9])))
    points = load_history(tmp_path, report([8]))
    assert [(p["label"], p["required"]) for p in points] == [("c", 5), ("b", 1), ("a", 2), ("this report", 8)]
    assert load_history(tmp_path / "missing") == []
