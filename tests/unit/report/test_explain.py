"""Explain (alone or inside a report) reads what the cook recorded instead of planning again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pipeline import api
from pipeline.plan import jobs as _jobs

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "sample_world"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("cooked")
    assert api.cook(SAMPLE, cache=tmp / "cache", out=tmp / "out", jobs=2).errors == []
    return tmp / "cache"


@pytest.fixture
def no_preprocessing(monkeypatch):
    def refuse(tree):
        raise AssertionError("a job the cook recorded was preprocessed again")
    monkeypatch.setattr(_jobs, "default_preprocessor", refuse)


def test_explain_reads_the_cook_s_records(cache: Path, no_preprocessing) -> None:
    found = api.keys(SAMPLE, cache=cache)
    for key, _ in found.required.sorted()[:5]:
        doc = api.explain(SAMPLE, key.hash[:12], cache=cache).to_json()
        assert doc["key"] == key.text and doc["stages"]
        assert all(s["state"] == "cached" and s["blob"] for s in doc["stages"])


def test_a_report_plans_each_key_once_for_its_figures_and_explanations(cache: Path, monkeypatch,
                                                                        no_preprocessing) -> None:
    planned: Counter = Counter()
    add = _jobs.Planner.add

    def counted(self, key, keep=True):
        planned[key] += 1
        return add(self, key, keep)
    monkeypatch.setattr(_jobs.Planner, "add", counted)
    report = api.report(SAMPLE, cache=cache)
    keys = {row.key for row in report.keys}
    assert len(report.explanations) == len(keys) > 0
    assert {key.text for key in planned} == keys and set(planned.values()) == {1}
    for doc in report.explanations.values():
        assert all(s["state"] == "cached" for s in doc["stages"])
