"""A level manifest updated by replacing the parts of the chunks that changed (outputs/level_delta.py)."""

from __future__ import annotations

import random

import orjson
import pytest
from level_helpers import rows_naming

from pipeline.digest import bytes_hash
from pipeline.keys.key import PermutationKey
from pipeline.outputs import level_delta, write_level
from pipeline.outputs import manifest as mf
from pipeline.outputs.contract import pipeline_state
from pipeline.outputs.records import LEVEL_OUTPUTS
from pipeline.outputs.write_chunk import write_now
from pipeline.outputs.write_level import Part, level_chunks, update_level

STATES = [{"blend": False, "cull": "back"}, {"blend": True, "cull": "none"}]


def entry(n: int, draws: int, blob: str = "blob") -> mf.ManifestEntry:
    key = PermutationKey("pbr", "forward", (("A", n),))
    return mf.ManifestEntry(key=key.text, hash=key.hash, shader="pbr", pass_name="forward",
                            features={"A": n}, stages={"fragment": bytes_hash(f"{blob}{n}".encode())}, draws=draws)


def chunk(name: str, rng: random.Random, blob: str = "blob") -> mf.ChunkManifest:
    keys = rng.sample(range(12), rng.randint(1, 5))
    entries = [entry(n, rng.randint(1, 9), blob) for n in keys]
    pipelines = dict(pipeline_state(e.key, [], STATES[rng.randint(0, 1)], {}) for e in entries)
    errors = [{"message": f"m{rng.randint(0, 3)}", "pointer": "/x"}] if rng.random() < 0.3 else []
    return mf.chunk_manifest(name, "forest", entries, errors, pipelines=pipelines)


def write(out, manifest: mf.ChunkManifest) -> mf.ChunkManifest:
    write_now(mf.chunk_manifest_path(out, manifest.chunk), mf.dump_json(manifest.to_json()))
    return manifest


def rebuilt_bytes(out) -> bytes:
    return mf.dump_json(mf.level_manifest("forest", level_chunks(out, "forest")).to_json())


@pytest.fixture
def rebuilds(monkeypatch):
    """How many times update_level rebuilt the union from every part rather than updating it."""
    calls, rebuilt = [], write_level.write_level_manifest

    def counted(*a, **k):
        calls.append(1)
        return rebuilt(*a, **k)
    monkeypatch.setattr(write_level, "write_level_manifest", counted)
    return calls


@pytest.mark.parametrize("seed", range(6))
def test_edits_added_and_deleted_chunks_give_the_bytes_of_a_rebuild(tmp_path, store, rebuilds, seed):
    rng, out = random.Random(seed), tmp_path / "out"
    names = [f"forest/c{n:02d}" for n in range(8)]
    for name in names[:6]:
        write(out, chunk(name, rng))
    update_level("forest", [], store, out)
    assert rebuilds == [1]  # the first write has nothing to update
    path = mf.level_manifest_path(out, "forest")
    for _ in range(12):
        name = rng.choice(names)
        if rng.random() < 0.2 and mf.chunk_manifest_path(out, name).exists():
            mf.chunk_manifest_path(out, name).unlink()
            built = {}
        else:
            new = write(out, chunk(name, rng))
            built = {name: Part(new.chunk, new.keys, new.pipelines, new.errors) if rng.random() < 0.5 else new}
        done = update_level("forest", list(built), store, out, built=built)
        assert done.read == 0 and rebuilds == [1]
        assert path.read_bytes() == rebuilt_bytes(out)
        assert recorded_users(store, path) == rows_naming(orjson.loads(path.read_bytes()))


def test_an_index_changed_behind_the_cook_s_back_is_read_and_carried_into_the_update(tmp_path, store, rebuilds):
    rng, out = random.Random(7), tmp_path / "out"
    for n in range(4):
        write(out, chunk(f"forest/c{n:02d}", rng))
    update_level("forest", [], store, out)
    write(out, chunk("forest/c02", rng))
    done = update_level("forest", [], store, out)
    assert done.read == 1 and rebuilds == [1] and mf.level_manifest_path(out, "forest").read_bytes() == rebuilt_bytes(out)


def recorded_users(store, path) -> tuple[list[int], list[int]]:
    users = store.get(LEVEL_OUTPUTS, str(path.resolve()))[3]
    return tuple(users)


@pytest.fixture
def rows_read(monkeypatch):
    """The chunk rows the updates parsed, as the chunk names they belong to."""
    read, real = [], level_delta._row

    def row(value, checked=True):
        parsed = real(value, checked)
        read.append(parsed["index"][:-len(".json")] if parsed else None)
        return parsed
    monkeypatch.setattr(level_delta, "_row", row)
    return read


def test_with_recorded_users_only_the_rows_of_changed_chunks_are_read_unless_a_position_moves(
        tmp_path, store, rebuilds, rows_read):
    out, path = tmp_path / "out", mf.level_manifest_path(tmp_path / "out", "forest")
    for name, keys in (("forest/a", (1, 2)), ("forest/b", (2, 3)), ("forest/c", (1, 3)), ("forest/d", (3, 5))):
        write(out, mf.chunk_manifest(name, "forest", [entry(n, 2) for n in keys], []))
    update_level("forest", [], store, out)
    assert rows_read == [] and recorded_users(store, path) == rows_naming(orjson.loads(path.read_bytes()))
    # other draws; a key new to the level sorting after all of its keys; a key leaving it; one sorting first
    for keys, read in (((1, 2), ["forest/a"]), ((1, 2, 6), ["forest/a"]), ((1, 3), ["forest/a"]),
                       ((0, 1), ["forest/a", "forest/b", "forest/c", "forest/d"])):
        rows_read.clear()
        new = write(out, mf.chunk_manifest("forest/a", "forest", [entry(n, 7) for n in keys], []))
        update_level("forest", ["forest/a"], store, out, built={"forest/a": new})
        assert sorted(rows_read) == read and rebuilds == [1]
        assert path.read_bytes() == rebuilt_bytes(out)
        assert recorded_users(store, path) == rows_naming(orjson.loads(path.read_bytes()))


@pytest.mark.parametrize("users", [None, [[1], [1]], [[9] * 5, [-1] * 5], "x"])
def test_recorded_users_that_do_not_fit_the_tables_are_counted_again(tmp_path, store, rebuilds, rows_read, users):
    out, path = tmp_path / "out", mf.level_manifest_path(tmp_path / "out", "forest")
    for name, keys in (("forest/a", (1, 2)), ("forest/b", (2, 3)), ("forest/c", (1, 3))):
        write(out, mf.chunk_manifest(name, "forest", [entry(n, 2) for n in keys], []))
    update_level("forest", [], store, out)
    record = list(store.get(LEVEL_OUTPUTS, str(path.resolve())))
    store.set(LEVEL_OUTPUTS, str(path.resolve()), record[:3] if users is None else [*record[:3], users])
    new = write(out, mf.chunk_manifest("forest/a", "forest", [entry(n, 7) for n in (1, 2)], []))
    update_level("forest", ["forest/a"], store, out, built={"forest/a": new})
    assert sorted(rows_read) == ["forest/a", "forest/b", "forest/c"] and rebuilds == [1]
    assert path.read_bytes() == rebuilt_bytes(out)
    assert recorded_users(store, path) == rows_naming(orjson.loads(path.read_bytes()))


def _level(tmp_path, store, chunks):
    out = tmp_path / "out"
    for m in chunks:
        write(out, m)
    update_level("forest", [], store, out)
    doc, union = mf.load_level_union(mf.level_manifest_path(out, "forest"))
    return doc, union


def test_a_changed_chunk_naming_other_blobs_for_a_key_is_left_to_the_rebuild(tmp_path, store):
    rng = random.Random(1)
    a, b = chunk("forest/c00", rng), chunk("forest/c01", rng)
    doc, union = _level(tmp_path, store, [a, b])
    other = mf.chunk_manifest("forest/c01", "forest", [entry(int(t[-2]), 1, "other") for t in a.keys])
    assert level_delta.updated_level(doc, union, "forest", ["forest/c00"], [other]) is None
    same = mf.chunk_manifest("forest/c01", "forest", [entry(int(t[-2]), 1) for t in a.keys])
    assert level_delta.updated_level(doc, union, "forest", ["forest/c00"], [same]) is not None


def test_a_level_listing_a_stale_chunk_is_left_to_the_rebuild(tmp_path, store):
    rng = random.Random(2)
    doc, union = _level(tmp_path, store, [chunk("forest/c00", rng)])
    union = {**union, "errors": (*union["errors"], {"chunk": "forest/c00", "message": mf.STALE})}
    assert level_delta.updated_level(doc, union, "forest", ["forest/c00"], []) is None


@pytest.mark.parametrize("rows", [{"keys": [-1, 1], "pipelines": []}, {"keys": [0], "pipelines": []},
                                  {"keys": [99, 1], "pipelines": []}, {"keys": [0, 1.5], "pipelines": []},
                                  {"keys": [0, -1], "pipelines": []}, {"keys": [[0, 1]], "pipelines": []},
                                  {"keys": [0, True], "pipelines": []}, {"keys": [0, 1], "pipelines": [-2]},
                                  {"keys": [0, 1], "pipelines": [99]}, {"keys": None}, {"index": 3}, "x"])
@pytest.mark.parametrize("kept", [True, False])
def test_rows_this_module_does_not_write_are_left_to_the_rebuild(tmp_path, store, rows, kept):
    rng = random.Random(3)
    doc, union = _level(tmp_path, store, [chunk("forest/c00", rng), chunk("forest/c01", rng)])
    assert level_delta.updated_level(doc, union, "forest", ["forest/c00", "forest/c01"], []) is not None
    doc["chunks"]["forest/c00"] = {**doc["chunks"]["forest/c00"], **rows} if isinstance(rows, dict) else rows
    # a row is checked whether its chunk is kept (counted) or changed (its draws taken from the sums)
    assert level_delta.updated_level(doc, union, "forest", ["forest/c00", "forest/c01"] if kept else ["forest/c01"],
                                     []) is None


def test_rows_of_unchanged_chunks_are_carried_as_they_are_when_no_position_moves(tmp_path, store):
    out = tmp_path / "out"
    for name, keys in (("forest/a", (1, 2)), ("forest/b", (2, 3)), ("forest/c", (1, 3))):
        write(out, mf.chunk_manifest(name, "forest", [entry(n, 2) for n in keys], []))
    update_level("forest", [], store, out)
    path = mf.level_manifest_path(out, "forest")
    for keys, moved in (((1, 2), False), ((1, 2, 4), False), ((0, 1, 2), True)):  # other draws; a key new to the
        # level sorting after all of its keys; one sorting first
        new = write(out, mf.chunk_manifest("forest/a", "forest", [entry(n, 7) for n in keys], []))
        doc, union = mf.load_level_union(path)
        updated = level_delta.updated_level(doc, union, "forest", ["forest/b", "forest/c"], [new])
        assert (updated["chunks"]["forest/b"]["keys"] is doc["chunks"]["forest/b"]["keys"]) is not moved
        assert updated["chunks"]["forest/b"]["keys"] == ([2, 2, 3, 2] if moved else doc["chunks"]["forest/b"]["keys"])
        assert mf.dump_json(updated) == rebuilt_bytes(out)
