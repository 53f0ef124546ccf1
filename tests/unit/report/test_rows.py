"""The report's row types and their JSON documents."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.report.rows import (
    AreaRow,
    BudgetCheck,
    ContributorRow,
    FeatureRow,
    FunnelRow,
    KeyRow,
    SinceDiff,
)
from pipeline.structs import replace


def test_rows_are_frozen() -> None:
    row = AreaRow("forest/c1", "forest", 3, 1, 7, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.required = 4


def test_a_row_document_names_every_field_with_pass_for_pass_name_and_lists_for_tuples() -> None:
    row = KeyRow("pbr/forward{A=1}", "abc", "pbr", "forward", 2, ("c1",), ("c1/a.gltf", "c1/b.gltf"))
    assert row.to_json() == {"key": "pbr/forward{A=1}", "hash": "abc", "shader": "pbr", "pass": "forward",
                             "draws": 2, "chunks": ["c1"], "files": ["c1/a.gltf", "c1/b.gltf"],
                             "pipelines": 0, "blobs": None}
    funnel = FunnelRow("pbr", "*", 2, 100, 40, 9, 5, None, None, None, None, None)
    doc = funnel.to_json()
    assert set(doc) == {f.name for f in dataclasses.fields(FunnelRow)} - {"pass_name"} | {"pass"}
    assert (doc["pass"], doc["kind"], doc["unique_binaries"]) == ("*", "ubershader", None)
    assert ContributorRow("a.gltf", None, 3, 1, 4).to_json() == {"file": "a.gltf", "material": None, "keys": 3,
                                                                  "only_here": 1, "draws": 4}


def test_feature_row_saved_and_name() -> None:
    row = FeatureRow("pbr", "NORMAL_MAP", 2, 10, 6)
    assert (row.saved, row.name) == (4, "pbr.NORMAL_MAP")
    assert row.to_json() == {"shader": "pbr", "feature": "NORMAL_MAP", "values_used": 2, "required": 10,
                             "if_dynamic": 6, "name": "pbr.NORMAL_MAP", "saved": 4}


def test_budget_within_has_no_message_in_its_document() -> None:
    check = BudgetCheck("level", "forest", 10, 10, "--budget")
    assert not check.over and check.to_json()["message"] is None and check.to_json()["over"] is False


def test_budget_over_names_the_excess_the_files_and_the_features() -> None:
    check = BudgetCheck("chunk", "forest/c1", 10, 13, "pipeline.toml", culprits=(("a.gltf", 2), ("b.gltf", 1)),
                        features=(("pbr.A", 4),))
    assert check.over
    assert check.message() == ("chunk forest/c1: 13 required keys exceed the budget of 10 (+3); "
                               "keys only these files need: a.gltf (2), b.gltf (1); "
                               "making these features dynamic would save: pbr.A (-4)")
    doc = check.to_json()
    assert doc["culprits"] == [{"file": "a.gltf", "only_here": 2}, {"file": "b.gltf", "only_here": 1}]
    assert doc["features"] == [{"feature": "pbr.A", "saved": 4}] and doc["message"] == check.message()
    assert BudgetCheck("world", "w", 1, 2, "--budget").message().endswith("(+1)")  # nothing more to name


def test_since_diff_by_file_counts_and_orders() -> None:
    diff = SinceDiff("old.json", added=(("k1", ("a", "b")), ("k2", ("b",))), removed=(("k3", ("c", "a")),),
                     warning="w")
    assert diff.by_file() == [{"file": "b", "added": 2, "removed": 0}, {"file": "a", "added": 1, "removed": 1},
                              {"file": "c", "added": 0, "removed": 1}]
    doc = diff.to_json()
    assert doc["added"] == [{"key": "k1", "files": ["a", "b"]}, {"key": "k2", "files": ["b"]}]
    assert doc["removed"] == [{"key": "k3", "files": ["c", "a"]}] and doc["warning"] == "w"
    assert doc["files"] == diff.by_file()


def test_a_target_row_is_failed_ok_or_not_cooked() -> None:
    from pipeline.report.rows import TargetRow

    row = TargetRow("webgl2", "pbr", ("web",), 10, 5, 3, 4, None, None, None, None, None, None)
    assert row.status == "not cooked" and row.to_json()["platforms"] == ["web"]
    assert replace(row, cached=4, missing=0, failed=0).to_json()["status"] == "ok"
    assert replace(row, cached=3, missing=0, failed=1).status == "failed"
    assert replace(row, cached=3, missing=1, failed=0).status == "not cooked"  # a job not compiled yet
