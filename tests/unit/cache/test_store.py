"""The on-disk cache: versioned data-only records and content-addressed blobs in one diskcache database."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest

from pipeline.cache.store import (
    DATABASE,
    FORMAT_VERSION,
    CacheWarning,
    RecordKind,
    Store,
    default_cache_dir,
)
from pipeline.digest import bytes_hash

THING = RecordKind("thing", 3)
KIND, OTHER = RecordKind("t", 2), RecordKind("u", 1)


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_record_reads_back_as_plain_json_data(tmp_path: Path) -> None:
    with Store(tmp_path / "c") as store:
        store.set(THING, "k", {"b": (1, 2), "a": "x"})
        assert store.get(THING, "k") == {"a": "x", "b": [1, 2]}  # tuples come back as arrays
    with Store(tmp_path / "c") as store:  # and persist across opens
        assert store.get(THING, "k") == {"a": "x", "b": [1, 2]}


def test_a_record_of_another_version_or_kind_is_a_miss(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.set(THING, "k", 1)
        assert store.get(RecordKind("thing", 4), "k", "miss") == "miss"
        assert store.get(RecordKind("other", 3), "k") is None
        assert store.get(THING, "absent", default=[]) == []


def test_keys_list_one_kind_only(tmp_path: Path) -> None:
    near = RecordKind("thing-identity", 1)  # shares a prefix with "thing", not the separator
    with Store(tmp_path) as store:
        store.set(THING, "a", 1)
        store.set(THING, "b", 2)
        store.set(near, "c", 3)
        digest = store.put_blob(b"spirv")
        assert sorted(store.keys(THING)) == ["a", "b"]
        assert store.keys(near) == ["c"]
        assert store.keys("blob") == [digest]
        store.delete(THING, "a")
        assert store.keys(THING) == ["b"]


def test_blobs_are_stored_once_by_content(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        first = store.put_blob(b"\x03\x02\x23\x07 same bytes")
        second = store.put_blob(bytearray(b"\x03\x02\x23\x07 same bytes"))
        assert first == second == bytes_hash(b"\x03\x02\x23\x07 same bytes")
        assert store.keys("blob") == [first]
        assert store.get_blob(first) == b"\x03\x02\x23\x07 same bytes" and store.has_blob(first)
        store.delete_blob(first)
        assert store.get_blob(first) is None and not store.has_blob(first)


def test_a_corrupt_blob_is_a_miss_with_a_warning_and_is_dropped(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        digest = store.put_blob(b"the real bytes")
        store._cache.set(f"blob:{digest}", b"rotten bytes")  # what bit rot on disk leaves
        with pytest.warns(CacheWarning, match=f"blob {digest[:12]} is corrupt; dropping it"):
            assert store.get_blob(digest) is None
        assert store.keys("blob") == [] and store.warnings
        assert store.put_blob(b"the real bytes") == digest and store.get_blob(digest) == b"the real bytes"


def test_a_record_that_is_not_json_is_a_miss_with_a_warning(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store._cache.set("thing:k", b"\x80not json")
        with pytest.warns(CacheWarning, match="unreadable thing record k"):
            assert store.get(THING, "k", "miss") == "miss"


def test_only_plain_data_is_stored(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        with pytest.raises(TypeError, match="cache values are bytes, str or numbers, not dict"):
            store._cache.set("raw", {"a": 1})
        with pytest.raises(TypeError, match="cache keys are strings, not tuple"):
            store._cache.set(("a", 1), b"x")
        with pytest.raises(TypeError):  # a record's data must be JSON-able: never pickled instead
            store.set(THING, "k", object())


def test_a_read_only_store_changes_nothing_on_disk(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.set(THING, "kept", "old")
        digest = store.put_blob(b"blob")
    before = files_of(tmp_path)
    with Store(tmp_path, read_only=True) as look:
        assert look.get(THING, "kept") == "old" and look.get_blob(digest) == b"blob"
        look.set(THING, "new", "in memory")
        look.delete(THING, "kept")
        assert look.get(THING, "new") == "in memory" and look.get(THING, "kept") is None
        assert look.keys(THING) == ["new"] and not look.on_disk and look.volume() == 0
    assert files_of(tmp_path) == before
    with Store(tmp_path) as store:
        assert store.get(THING, "kept") == "old" and store.get(THING, "new") is None


def test_a_read_only_look_at_no_cache_creates_nothing(tmp_path: Path) -> None:
    with Store(tmp_path / "absent", read_only=True) as look:
        assert look.get(THING, "k") is None and look.keys(THING) == []
        look.set(THING, "k", 1)
        assert look.get(THING, "k") == 1
    assert not (tmp_path / "absent").exists()


def test_a_database_sqlite_cannot_open_is_set_aside_and_started_over(tmp_path: Path) -> None:
    tmp_path.joinpath(DATABASE).write_bytes(b"garbage, not a database" * 64)
    with pytest.warns(CacheWarning, match=f"moved it to {DATABASE}.corrupt-{os.getpid()}, starting over"):
        store = Store(tmp_path)
    with store:
        store.set(THING, "k", "fresh")
        assert store.get(THING, "k") == "fresh"
    assert tmp_path.joinpath(f"{DATABASE}.corrupt-{os.getpid()}").read_bytes() == b"garbage, not a database" * 64


def test_a_fresh_cache_records_its_format(tmp_path: Path) -> None:
    Store(tmp_path).close()
    with sqlite3.connect(tmp_path / DATABASE) as db:
        (value,) = db.execute("SELECT value FROM Cache WHERE key = 'meta:format'").fetchone()
    assert value == FORMAT_VERSION


def test_a_newer_tool_s_cache_works_in_memory(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store._cache.set("meta:format", FORMAT_VERSION + 1)
        store.set(THING, "k", "theirs")
    with pytest.warns(CacheWarning, match=f"cache format {FORMAT_VERSION + 1} is newer"):
        store = Store(tmp_path)
    with store:
        assert not store.on_disk and store.get(THING, "k") is None  # their records are not ours to read
        store.set(THING, "k", "mine")
        assert store.get(THING, "k") == "mine"


def test_default_cache_dir_from_the_environment_else_under_the_working_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("PIPELINE_CACHE", raising=False)
    assert default_cache_dir(tmp_path) == tmp_path / "cache"
    monkeypatch.chdir(tmp_path)
    assert default_cache_dir() == tmp_path / "cache"
    monkeypatch.setenv("PIPELINE_CACHE", str(tmp_path / "elsewhere"))
    assert default_cache_dir(tmp_path / "ignored") == tmp_path / "elsewhere"


def test_batched_records_are_read_back_inside_and_written_together_on_the_way_out(tmp_path) -> None:
    kind = RecordKind("things", 1)
    with Store(tmp_path) as store, Store(tmp_path) as other:
        with store.batched():
            store.set(kind, "a", [1])
            with store.batched():  # nested: still held by the outer block
                store.set(kind, "b", {"x": 2})
            assert store.get(kind, "a") == [1] and store.has(kind, "b")
            assert other.get(kind, "a") is None and not other.has(kind, "b")  # nothing written yet
        assert other.get(kind, "a") == [1] and other.get(kind, "b") == {"x": 2}
        with pytest.raises(RuntimeError):
            with store.batched():
                store.set(kind, "c", 3)
                raise RuntimeError("the work did not finish")
        assert other.get(kind, "c") is None and store.get(kind, "c") is None
        store.set(kind, "d", 4)  # outside a block: at once
        assert other.get(kind, "d") == 4


def test_a_blob_put_in_a_batched_block_is_written_with_its_records_or_not_at_all(tmp_path) -> None:
    kind = RecordKind("things", 1)
    with Store(tmp_path) as store, Store(tmp_path) as other:
        with store.batched():
            digest = store.put_blob(b"\x03\x02\x23\x07blob")
            store.set(kind, "job", digest)
            assert store.get_blob(digest) == b"\x03\x02\x23\x07blob" and store.has_blob(digest)  # read back inside
            assert store.put_blob(b"\x03\x02\x23\x07blob") == digest
            assert other.get_blob(digest) is None and other.get(kind, "job") is None  # one commit, on the way out
        assert other.get_blob(digest) == b"\x03\x02\x23\x07blob" and other.get(kind, "job") == digest
        with pytest.raises(RuntimeError):
            with store.batched():
                lost = store.put_blob(b"never committed")
                raise RuntimeError("the work did not finish")
        assert other.get_blob(lost) is None and store.get_blob(lost) is None
        with store.batched():
            gone = store.put_blob(b"put, then deleted")
            store.delete_blob(gone)
            assert store.get_blob(gone) is None
        assert other.get_blob(gone) is None
        assert store.put_blob(b"outside a block") in other.keys("blob")  # at once


def test_an_in_memory_store_s_records_are_drained_and_stored_elsewhere_as_made(tmp_path: Path) -> None:
    made = Store.in_memory()
    with made.batched():
        made.set(KIND, "a", {"x": [1, 2]})
        made.set(OTHER, "b", 1)
    assert not made.on_disk and made.get(KIND, "a") == {"x": [1, 2]}
    records = made.drain()
    assert made.drain() == {} and made.get(KIND, "a") is None  # taken out
    with Store(tmp_path / "c") as store:
        assert store.set_raw(records, [KIND]) == 1  # only the kinds asked for
        assert store.get(KIND, "a") == {"x": [1, 2]} and store.get(OTHER, "b") is None
        newer = {"t:c": orjson.dumps({"v": KIND.version + 1, "data": 2}), "t:d": b"not json", "t:e": "text"}
        assert store.set_raw(newer, [KIND]) == 0  # another version, not a record, not bytes: left out
        assert store.get(KIND, "c") is None
    with pytest.raises(TypeError):
        Store(tmp_path / "d").drain()


def test_many_records_are_read_together_as_get_reads_each(tmp_path: Path) -> None:
    keys = [f"k{i}" for i in range(1200)]  # more than one query's worth
    with Store(tmp_path) as store:
        for i, key in enumerate(keys[::2]):
            store.set(KIND, key, {"i": i})
        store.set(OTHER, "k1", "another kind")
        store._cache.set("t:k3", b"not json")
        store._cache.set("t:k5", b'{"v":1,"data":"old"}')  # another version
        with store.batched():
            store.set(KIND, "k7", "pending")  # read back from the batch, as get does
            found = store.get_many(KIND, keys)
        assert found == {k: store.get(KIND, k) for k in keys if store.get(KIND, k) is not None}
        assert len(found) == 601 and found["k7"] == "pending" and "k1" not in found and "k5" not in found
        assert any("unreadable t record k3" in w for w in store.warnings)
        asked = []
        get_many = store.get_many
        store.get_many = lambda kind, part: asked.append(len(part)) or get_many(kind, part)
        assert list(store.get_each(KIND, keys)) == [(k, store.get(KIND, k)) for k in keys]  # in order, None absent
        assert asked == [500, 500, 200]  # a query's worth at a time
    with Store(tmp_path, read_only=True) as look:  # a look without diskcache: one by one, same answers
        assert look.get_many(KIND, keys) == found  # the batch was written on its way out
    assert Store.in_memory().get_many(KIND, keys) == {}


def test_which_records_are_present_is_what_has_says_of_each(tmp_path: Path) -> None:
    keys = [f"k{i}" for i in range(700)]
    with Store(tmp_path) as store:
        for key in keys[::3]:
            store.set(KIND, key, 1)
        store.set(OTHER, "k1", "another kind")
        with store.batched():
            store.set(KIND, "k2", "pending")
            assert store.present(KIND, keys) == {k for k in keys if store.has(KIND, k)} == set(keys[::3]) | {"k2"}
    with Store(tmp_path, read_only=True) as look:  # not a diskcache database: asked one by one
        assert look.present(KIND, keys) == {k for k in keys if look.has(KIND, k)} == set(keys[::3]) | {"k2"}
        look.delete(KIND, "k0")  # in memory only: this look no longer sees it, the database keeps it
        look.set(KIND, "k1", "in memory")
        assert look.present(KIND, ["k0", "k1", "k2"]) == {"k1", "k2"}
    with Store(tmp_path, read_only=True) as look:
        assert look.present(KIND, ["k0", "k1"]) == {"k0"}
    assert Store.in_memory().present(KIND, keys) == set()


def test_which_blobs_are_stored_is_what_their_entries_say(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        digests = [store.put_blob(bytes([i]) * 8) for i in range(5)]
        store.delete_blob(digests[1])
        with store.batched():
            pending = store.put_blob(b"pending blob")
            assert store.blobs_stored([*digests, pending, "0" * 64]) == {*digests[:1], *digests[2:], pending}
    with Store(tmp_path, read_only=True) as look:  # not a diskcache database: asked one by one
        assert look.blobs_stored(digests) == {*digests[:1], *digests[2:]}
    assert Store.in_memory().blobs_stored(digests) == set()
