"""Use records: which job keys each cook used and when, what ``pipeline cache gc`` keeps."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pipeline.cache.store import Store
from pipeline.cache.use_records import USE_SET, USE_TIME, record_use, use_set_id, use_times, used_jobs


@pytest.fixture()
def store(tmp_path: Path):
    with Store(tmp_path / "cache") as s:
        yield s


def test_a_use_set_is_named_by_the_hash_of_its_sorted_keys() -> None:
    assert use_set_id(["b", "a", "c"]) == use_set_id(("c", "b", "a"))
    assert use_set_id(["a", "b", "c"]) == hashlib.sha256(b"a\nb\nc").hexdigest()
    assert use_set_id(["a", "b"]) != use_set_id(["a", "b", "c"])
    assert use_set_id(["ab"]) != use_set_id(["a", "b"])  # keys are separated, not run together


def test_record_use_writes_the_sorted_set_and_the_time(store: Store) -> None:
    ident = record_use(store, {"k2", "k1"}, now=1000.0)
    assert ident == use_set_id(["k1", "k2"])
    assert store.get(USE_SET, ident) == {"jobs": ["k1", "k2"]}
    assert store.get(USE_TIME, ident) == {"time": 1000.0}
    assert use_times(store) == {ident: 1000.0}


def test_the_same_content_shares_one_record_whose_time_moves(store: Store) -> None:
    first = record_use(store, ["k1", "k2"], now=1000.0)
    again = record_use(store, ["k2", "k1"], now=2000.0)
    assert first == again and store.keys(USE_SET) == [first]
    assert use_times(store) == {first: 2000.0}


def test_record_use_stamps_the_current_time_by_default(store: Store, monkeypatch) -> None:
    monkeypatch.setattr("pipeline.cache.use_records.time.time", lambda: 1234.5)
    ident = record_use(store, ["k"])
    assert use_times(store) == {ident: 1234.5}


def test_used_jobs_keeps_the_sets_used_at_or_after_the_cutoff(store: Store) -> None:
    record_use(store, ["old", "shared"], now=100.0)
    record_use(store, ["shared", "edge"], now=200.0)
    record_use(store, ["new"], now=300.0)
    assert used_jobs(store, since=200.0) == {"shared", "edge", "new"}
    assert used_jobs(store, since=0.0) == {"old", "shared", "edge", "new"}
    assert used_jobs(store, since=301.0) == set()


def test_malformed_use_records_are_skipped(store: Store) -> None:
    good = record_use(store, ["k"], now=500.0)
    store.set(USE_TIME, "no-time", {"when": 1})
    store.set(USE_TIME, "text-time", {"time": "yesterday"})
    store.set(USE_TIME, "not-a-dict", [1, 2])
    store.set(USE_TIME, "no-set", {"time": 900.0})  # a time whose set is gone names no job
    assert set(use_times(store)) == {good, "no-set"}
    assert used_jobs(store, since=0.0) == {"k"}


def test_an_empty_cook_records_an_empty_set(store: Store) -> None:
    ident = record_use(store, [], now=1.0)
    assert ident == use_set_id([]) and store.get(USE_SET, ident) == {"jobs": []}
    assert used_jobs(store, since=0.0) == set()
