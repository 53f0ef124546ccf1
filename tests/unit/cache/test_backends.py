"""cache.backends: where the store's records live, and records read many at a time."""

from __future__ import annotations

import pickle
from pathlib import Path

import diskcache
import pytest

from pipeline.cache.backends import QUERY_KEYS, DataDisk, MemoryCache, UnsafeEntry, present_many, read_many

MISSING = object()


def asked_one_by_one(cache):
    asked = []

    def one(name):
        asked.append(name)
        try:
            return cache.get(name, MISSING)
        except UnsafeEntry:
            return MISSING
    return one, asked


def test_a_database_is_asked_once_per_query_s_worth_of_names(tmp_path: Path) -> None:
    with diskcache.Cache(str(tmp_path), disk=DataDisk) as cache:
        names = [f"t:{i}" for i in range(QUERY_KEYS * 2 + 3)]
        for name in names[::3]:
            cache.set(name, name.encode())
        cache.set("big", b"x" * 100_000)  # kept in a file of its own, not in the row
        one, asked = asked_one_by_one(cache)
        statements = []
        cache._con.set_trace_callback(statements.append)
        found = read_many(cache, names + ["big"], one, MISSING)
        cache._con.set_trace_callback(None)
        assert found == {name: name.encode() for name in names[::3]} | {"big": b"x" * 100_000}
        assert asked == [] and sum(s.startswith("SELECT key, mode") for s in statements) == 3


def test_an_entry_that_does_not_load_is_asked_alone(tmp_path: Path) -> None:
    with diskcache.Cache(str(tmp_path)) as plain:  # a pickle, as another program might leave
        plain.set("t:p", {"a": 1})
    with diskcache.Cache(str(tmp_path), disk=DataDisk) as cache:
        cache.set("t:ok", b"1")
        with pytest.raises(UnsafeEntry):
            cache.get("t:p")
        one, asked = asked_one_by_one(cache)
        assert read_many(cache, ["t:ok", "t:p", "t:absent"], one, MISSING) == {"t:ok": b"1"}
        assert asked == ["t:p"]  # the store's one-by-one read warns about it
        assert pickle.dumps({"a": 1}) not in (v for v in read_many(cache, ["t:p"], one, MISSING).values())


def test_other_caches_are_asked_one_by_one() -> None:
    memory = MemoryCache({"a": 1, "b": 2})
    one, asked = asked_one_by_one(memory)
    assert read_many(memory, ["a", "c"], one, MISSING) == {"a": 1} and asked == ["a", "c"]


def test_which_names_are_present_is_asked_once_per_query_s_worth_without_reading_a_value(tmp_path: Path) -> None:
    with diskcache.Cache(str(tmp_path), disk=DataDisk) as cache:
        names = [f"t:{i}" for i in range(QUERY_KEYS + 7)]
        for name in names[::2]:
            cache.set(name, name.encode())
        cache.set("t:gone", b"x", expire=-1)  # expired: absent, as for a read
        statements = []
        cache._con.set_trace_callback(statements.append)
        found = present_many(cache, names + ["t:gone"])
        cache._con.set_trace_callback(None)
        assert found == set(names[::2]) == {n for n in names + ["t:gone"] if n in cache}
        assert [s.split(" FROM")[0] for s in statements] == ["SELECT key", "SELECT key"]
    assert present_many(MemoryCache({"a": 1}), ["a", "b"]) == {"a"}
