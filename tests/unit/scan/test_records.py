"""Scan records: a chunk's scan entry as a JSON record and back, and records of another layout refused."""

from __future__ import annotations

import shutil

import orjson
import pytest

from runtime_helpers import SAMPLE
from pipeline.config import WorldConfig
from pipeline.scan.chunk_scan import ChunkScan
from pipeline.chunks import discover
from pipeline.digest import canonical_bytes
from pipeline.scan.gltf.draws import SharedFacts
from pipeline.scan.records import decode, encode
from pipeline.facts import replace


@pytest.fixture
def entry(tmp_path) -> dict:
    shutil.copytree(SAMPLE / "forest" / "c00", tmp_path / "forest" / "c00")
    config = WorldConfig()
    (chunk,) = discover(tmp_path, config)
    work = ChunkScan(tmp_path, chunk, config, frozenset(), {})
    work.run(chunk.files, lambda: None)
    return work.entry()


def stored(record: dict) -> dict:
    """What the store gives back: the record through JSON."""
    return orjson.loads(orjson.dumps(record))


def test_an_entry_survives_a_trip_through_its_record(entry: dict) -> None:
    back = decode(stored(encode(entry)))
    assert back["signatures"] == entry["signatures"]
    assert back["facts"] == entry["facts"]
    assert back["files"].keys() == entry["files"].keys()
    for file, (stat, size, digest, deps, rows, diagnostics, lights) in entry["files"].items():
        assert back["files"][file] == (tuple(stat), size, digest, tuple(tuple(d) for d in deps),
                                       tuple(tuple(r) for r in rows), tuple(diagnostics),
                                       tuple(tuple(light) for light in lights))


def test_the_record_is_plain_json_with_the_documented_fields(entry: dict) -> None:
    record = encode(entry)
    assert set(record) == {"files", "parts", "facts", "signatures"}
    assert set(record["parts"]) == {"mesh", "material", "node", "scene", "chunk", "draw"}
    file = next(iter(record["files"].values()))
    assert set(file) == {"stat", "size", "sha256", "deps", "draws", "diagnostics", "lights"}
    assert stored(record) == orjson.loads(orjson.dumps(stored(record)))


def test_facts_and_draws_that_disagree_are_refused(entry: dict) -> None:
    record = stored(encode(entry))
    record["signatures"].append("extra")
    with pytest.raises(ValueError, match="disagree"):
        decode(record)
    record = stored(encode(entry))
    file = next(f for f in record["files"].values() if f["draws"])
    file["draws"][0][5] = len(record["facts"])  # an index past the facts
    with pytest.raises(ValueError, match="disagree"):
        decode(record)


@pytest.mark.parametrize("damage", [
    lambda r: r.pop("facts"),
    lambda r: next(iter(r["files"].values())).pop("stat"),
    lambda r: next(iter(r["files"].values())).__setitem__("draws", [[0, 0]]),
    lambda r: next(iter(r["files"].values())).__setitem__("size", "big"),
    lambda r: r["facts"].__setitem__(0, {"not": "facts"}),
    lambda r: r["facts"][0].__setitem__(0, -1),  # no counting from the end
    lambda r: r["facts"][0].__setitem__(1, len(r["parts"]["material"])),
    lambda r: r["facts"][0].__setitem__(2, True),
    lambda r: r["facts"][0].extend([{}, {}]),
    lambda r: r.pop("parts"),
    lambda r: r["parts"]["mesh"].__setitem__(0, {"not": "a mesh"}),
])
def test_a_record_of_another_layout_raises(entry: dict, damage) -> None:
    record = stored(encode(entry))
    damage(record)
    with pytest.raises((KeyError, TypeError, ValueError)):
        decode(record)


def test_each_part_is_recorded_once_and_read_back_shared(entry: dict) -> None:
    record = stored(encode(entry))
    assert len(record["facts"]) == len(entry["facts"]) > 1
    assert len(record["parts"]["chunk"]) == 1  # one chunk: every facts row names the same part
    back = decode(record)["facts"]
    assert all(f.chunk is back[0].chunk for f in back)
    assert [f.signature() for f in back] == [f.signature() for f in entry["facts"]]


def test_provided_facts_survive_the_trip(entry: dict) -> None:
    ext = {"lod": {"level": 2, "name": "far", "unknown": None}}
    entry["facts"][0] = replace(entry["facts"][0], ext=ext)
    back = decode(stored(encode(entry)))["facts"]
    assert back[0].ext == ext and back[0] == entry["facts"][0] and back[1].ext == {}


def test_parts_read_from_their_known_bytes_give_the_same_stored_record(tmp_path) -> None:
    shutil.copytree(SAMPLE / "forest" / "c00", tmp_path / "forest" / "c00")
    config = WorldConfig()
    (chunk,) = discover(tmp_path, config)
    shared = SharedFacts()
    work = ChunkScan(tmp_path, chunk, config, frozenset(), {}, shared=shared)
    work.run(chunk.files, lambda: None)
    asked = []
    known = encode(work.entry(), lambda key: asked.append(key) or shared.canonical.get(key))
    assert asked and all(shared.canonical.get(key) is not None for key in asked)  # every part was known
    assert canonical_bytes(known) == canonical_bytes(encode(work.entry()))  # what the store writes
