"""A library's chunk table read on demand (outputs/chunk_table.py): positions kept, shared and mapped; its file."""

from __future__ import annotations

import orjson
import pytest

from pipeline.outputs import chunk_table
from pipeline.outputs.chunk_table import ChunkTable, dump_table, load_table, read_table, table_path
from pipeline.stamps import stamp_of

HASHES = ["a" * 64, "b" * 64, "c" * 64, "d" * 64]


def table() -> ChunkTable:
    return ChunkTable.read({"chunks": {"x": [0, 2], "y": [1], "z": []}}, HASHES)


@pytest.mark.parametrize("doc", [
    [], {"chunks": []}, {"other": {}}, {"chunks": {"x": "0"}}, {"chunks": {"x": [0.0]}}, {"chunks": {"x": [True]}},
    {"chunks": {"x": [-1]}}, {"chunks": {"x": [4]}}, {"chunks": {"x": [2, 0]}}, {"chunks": {"x": [1, 1]}},
])
def test_a_table_that_is_not_ascending_positions_of_the_library_s_blobs_does_not_read(doc) -> None:
    with pytest.raises(ValueError):
        ChunkTable.read(doc, HASHES)


def test_entries_are_made_into_hashes_only_when_asked_for() -> None:
    found = table()
    assert sorted(found) == ["x", "y", "z"] and len(found) == 3 and "y" in found and "w" not in found
    assert found._made == {}
    assert found["x"] == frozenset({HASHES[0], HASHES[2]}) and list(found._made) == ["x"]
    assert found["z"] == frozenset() and found.get("w") is None
    assert found == {"x": {HASHES[0], HASHES[2]}, "y": {HASHES[1]}, "z": set()} != {"x": set()}
    assert found.blobs() == frozenset(HASHES[:3])


def test_an_updated_table_shares_what_it_does_not_change_and_compares_without_making_it() -> None:
    found = table()
    new = found.updated({"y": frozenset({HASHES[3]}), "w": frozenset({HASHES[0]})}, keep=["x", "y"])
    assert dict(new) == {"x": {HASHES[0], HASHES[2]}, "y": {HASHES[3]}, "w": {HASHES[0]}}  # z not kept
    again = found.updated({"y": frozenset({HASHES[3]}), "w": frozenset({HASHES[0]})}, keep=["x", "y"])
    fresh = found.updated({})
    assert fresh == found and fresh._made == {} and found._made == {}  # shared entries: equal as they are
    assert again == new and new != found and new.blobs() == frozenset({HASHES[0], HASHES[2], HASHES[3]})


def test_encoded_keeps_the_positions_of_the_same_blobs_and_maps_them_into_others() -> None:
    found = table()
    same = found.encoded({h: i for i, h in enumerate(HASHES)})
    assert same == {"x": [0, 2], "y": [1], "z": []} and same["x"] is found._positions["x"]
    grown = ["0" * 64, *HASHES]  # a blob sorted before the others: every position moves
    assert found.encoded({h: i for i, h in enumerate(grown)}) == {"x": [1, 3], "y": [2], "z": []}
    given = found.updated({"y": frozenset({HASHES[3], HASHES[0]})})
    assert given.encoded({h: i for i, h in enumerate(HASHES)}) == {"x": [0, 2], "y": [0, 3], "z": []}
    with pytest.raises(KeyError) as lacking:
        found.encoded({h: i for i, h in enumerate([HASHES[0], HASHES[1]])})  # the library lost c
    assert lacking.value.args == ("x", HASHES[2])
    with pytest.raises(KeyError) as lacking:
        given.encoded({HASHES[0]: 0, HASHES[2]: 1})
    assert lacking.value.args == ("y", HASHES[3])


# ------------------------------------------------------------------ the table file
CHECKSUM = "e" * 64


def test_the_file_round_trips_for_its_library(tmp_path) -> None:
    path = table_path(tmp_path / "shaders.pak")
    assert path.name == "shaders.chunks"
    path.write_bytes(dump_table(table(), HASHES, CHECKSUM))
    assert orjson.loads(path.read_bytes()) == {"chunks": {"x": [0, 2], "y": [1], "z": []}, "format": 1,
                                               "library": CHECKSUM}
    assert load_table(path, HASHES, CHECKSUM) == table()


@pytest.mark.parametrize("data", [
    b"not json", b"[]", b'{"chunks": {}, "format": 2, "library": "' + CHECKSUM.encode() + b'"}',
    b'{"chunks": {"x": [9]}, "format": 1, "library": "' + CHECKSUM.encode() + b'"}',
    b'{"chunks": {}, "format": 1, "library": "' + b"f" * 64 + b'"}',   # written for another library
    b'{"chunks": {}, "format": 1}',
])
def test_a_file_that_is_not_this_library_s_table_is_not_read(tmp_path, data) -> None:
    path = tmp_path / "shaders.chunks"
    path.write_bytes(data)
    assert load_table(path, HASHES, CHECKSUM) is None
    assert load_table(tmp_path / "missing.chunks", HASHES, CHECKSUM) is None


def test_a_table_over_the_size_cap_or_not_a_regular_file_is_not_read(tmp_path, monkeypatch) -> None:
    path = table_path(tmp_path / "shaders.pak")
    data = dump_table(table(), HASHES, CHECKSUM)
    path.write_bytes(data)
    monkeypatch.setattr(chunk_table, "MAX_TABLE_BYTES", len(data))
    assert load_table(path, HASHES, CHECKSUM) == table()  # at the cap: read
    monkeypatch.setattr(chunk_table, "MAX_TABLE_BYTES", len(data) - 1)
    assert load_table(path, HASHES, CHECKSUM) is None
    path.unlink()
    path.mkdir()
    assert load_table(path, HASHES, CHECKSUM) is None


def test_a_chunk_naming_a_blob_the_library_lacks_is_not_written() -> None:
    with pytest.raises(KeyError):
        dump_table(ChunkTable(sets={"x": frozenset({"0" * 64})}), HASHES, CHECKSUM)


# ------------------------------------------------------------------ a file a settle left (trusted)
def stamped(path) -> list[int]:
    return list(stamp_of(path))


def test_a_trusted_file_is_taken_as_it_is_and_written_back_as_its_bytes(tmp_path, monkeypatch) -> None:
    path = table_path(tmp_path / "shaders.pak")
    data, want = dump_table(table(), HASHES, CHECKSUM), table()
    path.write_bytes(data)
    monkeypatch.setattr(ChunkTable, "read", None)  # no entry checked: the check is not even called
    found, stamp, exact = read_table(path, HASHES, CHECKSUM, trusted=stamped(path))
    assert list(stamp) == stamped(path) and exact
    assert not any(type(at) is list for at in found._positions.values())  # no entry decoded
    assert dump_table(found, HASHES, CHECKSUM) == data  # written back as the bytes read
    assert found.positions("x") == [0, 2] and found.positions("w") is None and found._made == {}
    assert found == want and found.blobs() == frozenset(HASHES[:3])
    grown = ["0" * 64, *HASHES]  # the library's blobs moved: the entries are decoded and mapped
    assert orjson.loads(dump_table(found, grown, CHECKSUM))["chunks"] == {"x": [1, 3], "y": [2], "z": []}
    assert read_table(path, HASHES, "f" * 64, trusted=stamped(path))[0] is None  # another library's


def test_a_file_whose_stamp_is_not_the_trusted_one_is_read_and_checked_whole(tmp_path, monkeypatch) -> None:
    path = table_path(tmp_path / "shaders.pak")
    want = table()
    path.write_bytes(dump_table(want, HASHES, CHECKSUM))
    checked, real = [], ChunkTable.read.__func__
    monkeypatch.setattr(ChunkTable, "read", classmethod(lambda cls, *a: checked.append(a) or real(cls, *a)))
    found, stamp, exact = read_table(path, HASHES, CHECKSUM, trusted=[0, 0, 0, 0])
    assert found == want and exact and len(checked) == 1 and all(type(at) is list for at in found._positions.values())
    path.write_bytes(orjson.dumps(orjson.loads(path.read_bytes()), option=orjson.OPT_INDENT_2))  # edited by hand
    found, stamp, exact = read_table(path, HASHES, CHECKSUM, trusted=[0, 0, 0, 0])
    assert found == want and not exact and len(checked) == 2  # valid, but not the bytes dump_table writes
    path.write_bytes(b'{"chunks": {"x": [9]}, "format": 1, "library": "' + CHECKSUM.encode() + b'"}')
    assert read_table(path, HASHES, CHECKSUM, trusted=stamped(path))[0] is not None  # trusted: not checked
    assert read_table(path, HASHES, CHECKSUM)[0] is None and load_table(path, HASHES, CHECKSUM) is None
    assert read_table(tmp_path / "missing.chunks", HASHES, CHECKSUM) == (None, None, False)


# ------------------------------------------------------------------ users
def test_users_count_the_chunks_naming_each_blob_and_recounted_gives_them_from_the_changes() -> None:
    found = table()
    assert found.users() == ([1, 1, 1, 0], {})
    new = found.updated({"y": frozenset({HASHES[3], HASHES[0]}), "w": frozenset({"0" * 64})}, keep=["x", "y"])
    assert new.users() == ([2, 0, 1, 1], {"0" * 64: 1})
    assert new.recounted([1, 1, 1, 0], found, ["y", "w", "z"]) == new.users()
    assert found.recounted([1, 1, 1, 0], found, []) == ([1, 1, 1, 0], {})


@pytest.mark.parametrize("users", [None, [1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, -1], [1, True, 1, 0], [1, 1.0, 1, 0],
                                   {"0": 1}, [1, 0, 1, 0]])  # the last: y's blob is counted no user
def test_counts_that_do_not_fit_are_not_recounted(users) -> None:
    found = table()
    new = found.updated({"y": frozenset({HASHES[3]})})
    assert new.recounted(users, found, ["y"]) is None
    other = ChunkTable.read({"chunks": {"x": [0, 2], "y": [1], "z": []}}, list(HASHES))
    assert new.recounted([1, 1, 1, 0], other, ["y"]) is None  # counts of another library read
