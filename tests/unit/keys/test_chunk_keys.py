"""A chunk's keys: its record read back, and a scanned chunk evaluated into them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from pipeline.digest import canonical_bytes
from pipeline.errors import Diagnostic, Location
from pipeline.keys.chunk_keys import ChunkKeys, Unattributed, evaluate_chunk
from pipeline.keys.recorded import StoredDraws
from pipeline.keys.records import CHUNK_DRAWS, EVALUATIONS, TRACES
from pipeline.keys.required import KeyUses, optional_facts
from pipeline.scan.gltf.draws import SharedFacts
from pipeline.scan.scanner import scan_chunk
from paths import SAMPLE_WORLD as SAMPLE


def test_a_chunk_record_reads_back_as_the_uses_its_draws_were_evaluated_to(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    found = api.keys(world)
    for name, required in sorted(found.by_chunk.items()):
        level = world.level_of(name)
        chunk = ChunkKeys(name, level, 0, dict(required.keys), [], [])
        summary, draws = chunk.to_records()
        back = ChunkKeys.from_records(summary, {}, draws, chunk.definitions().get)
        assert back.keys == required.keys  # draws, bindings, render states, specialization: one shape
        assert all(isinstance(uses, KeyUses) for uses in back.keys.values())
        # each draw listed once, however many keys (passes) bind it; three numbers per binding
        distinct = {id(d) for uses in required.keys.values() for d, _, _ in uses.bindings}
        assert len(draws["draws"]) == len(distinct) == len({tuple(d) for d in draws["draws"]})
        assert [len(rows) for rows in draws["bindings"]] == [3 * len(u.bindings) for u in required.keys.values()]


def test_a_scanned_chunk_evaluates_to_the_keys_a_world_scan_finds_for_it(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    full = api.keys(world)
    optional = optional_facts(world.rulesets)
    memo: dict = {}
    with world.open_store() as store:
        for info in world.select().chunks:
            found = scan_chunk(world.root, info, world.config, optional, store, SharedFacts())
            chunk = evaluate_chunk(world.rulesets, info, found, optional, memo)
            assert chunk.keys == full.by_chunk[info.name].keys
            assert chunk.draws == sum(1 for d in full.scan.draws if d.source.chunk == info.name) > 0
    assert memo  # evaluations shared across the chunks


def test_a_scan_reporting_on_a_file_outside_the_chunk_is_left_to_the_full_path(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    info = world.select().chunks[0]
    with world.open_store() as store:
        found = scan_chunk(world.root, info, world.config, frozenset(), store, SharedFacts())
    found.diagnostics.append(Diagnostic(Location("elsewhere/buffer.bin"), "cannot read"))
    with pytest.raises(Unattributed):
        evaluate_chunk(world.rulesets, info, found, frozenset(), {})


def test_a_chunk_s_draws_are_read_from_the_store_only_when_asked_and_let_go(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    found = api.keys(world)
    name, required = sorted(found.by_chunk.items())[0]
    chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
    summary, draws = chunk.to_records()
    with world.open_store() as store:
        store.set(CHUNK_DRAWS, "fp", draws)
        back = ChunkKeys.from_records(summary, {}, StoredDraws(store, "fp"), chunk.definitions().get)
        source = next(iter(back.keys.values()))._source
        assert source._data is None  # a cook that merges keys reads no draw
        assert [u.draw_count for u in back.keys.values()] == [len(u.draws) for u in required.keys.values()]
        assert source._data is None
        assert back.keys == required.keys  # now read: the same draws, bindings, states
        for uses in back.keys.values():
            uses.release()
        assert source._data is None and back.keys == required.keys  # read again when asked again
        store.delete(CHUNK_DRAWS, "fp")
        for uses in back.keys.values():
            uses.release()
        with pytest.raises(OSError, match="no longer holds the draws"):
            next(iter(back.keys.values())).bindings


def test_a_chunk_record_holds_each_render_state_once_and_chunks_read_back_share_them(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    found = api.keys(world)
    interned: dict = {}
    states: dict[str, dict] = {}
    for name, required in sorted(found.by_chunk.items()):
        chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
        summary, draws = chunk.to_records()
        assert len(summary["render_states"]) == len(set(summary["render_states"]))  # a table: each text once
        used = {i for at in summary["key_states"] for i in summary["state_lists"][at]}
        assert used == set(range(len(summary["render_states"])))  # and every entry is a key's
        assert len(summary["state_lists"]) == len(set(map(tuple, summary["state_lists"])))  # each list once
        back = ChunkKeys.from_records(summary, interned, draws, chunk.definitions().get)
        assert back.keys == required.keys
        for uses in back.keys.values():
            for state in uses.render_states:
                same = states.setdefault(canonical_bytes(state).decode(), state)
                assert same is state  # equal render states of any chunk: one object
    assert len(found.by_chunk) > 1 and states


def test_the_process_wide_canonical_texts_stay_under_their_bound_and_records_do_not_change(
        tmp_path: Path, monkeypatch) -> None:
    import pipeline.keys.chunk_keys as chunk_keys
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    chunks = [ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
              for name, required in sorted(api.keys(world).by_chunk.items())]
    unbounded = [chunk.to_records() for chunk in chunks]
    monkeypatch.setattr(chunk_keys, "_CANON", {})
    monkeypatch.setattr(chunk_keys, "_CANON_HELD", [0])
    monkeypatch.setattr(chunk_keys, "_CANON_BYTES", 64)
    held = []
    for chunk, records in zip(chunks, unbounded):
        assert chunk.to_records() == records
        held.append(sum(len(raw) for _, raw in chunk_keys._CANON.values()))
        assert held[-1] == chunk_keys._CANON_HELD[0]
    # past the bound it starts afresh: it holds less than the bound and the one text that crossed it
    longest = max(len(canonical_bytes(value)) for _, draws in unbounded
                  for value in draws["render_states"] + draws["specializations"])
    assert max(held) < 64 + longest
    assert len(chunks) > 1 and held[-1] > 0


def test_a_chunk_record_whose_table_entry_is_not_an_object_does_not_read(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    name, required = sorted(api.keys(world).by_chunk.items())[0]
    chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
    summary, draws = chunk.to_records()
    summary["render_states"][0] = "[1, 2]"
    with pytest.raises(ValueError):
        ChunkKeys.from_records(summary, {}, draws, chunk.definitions().get)


@pytest.mark.parametrize("column", ["keys", "key_draws", "key_states", "key_specializations"])
def test_a_chunk_record_whose_key_columns_differ_in_length_does_not_read(tmp_path: Path, column: str) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    name, required = sorted(api.keys(world).by_chunk.items())[0]
    chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
    summary, draws = chunk.to_records()
    assert ChunkKeys.from_records(dict(summary), {}, draws, chunk.definitions().get).keys == required.keys
    summary[column] = summary[column][1:]
    with pytest.raises(ValueError, match="one length"):
        ChunkKeys.from_records(summary, {}, draws, chunk.definitions().get)


def test_a_chunk_record_names_its_keys_by_hash_and_reads_each_definition_once(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    found = api.keys(world)
    interned: dict = {}
    asked: list[str] = []
    definitions: dict = {}
    for name, required in sorted(found.by_chunk.items()):
        chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
        summary, draws = chunk.to_records()
        assert summary["keys"] == [k.hash for k in required.keys]
        assert summary["key_draws"] == [len(u.draws) for u in required.keys.values()]
        assert not any(k.text in str(summary) for k in required.keys)  # no definition in the chunk's record
        definitions.update(chunk.definitions())
        back = ChunkKeys.from_records(summary, interned, draws, lambda d: asked.append(d) or definitions.get(d))
        assert back.keys == required.keys
    assert sorted(asked) == sorted({k.hash for r in found.by_chunk.values() for k in r.keys})  # each once


def test_a_chunk_record_whose_key_is_undefined_or_defined_as_another_does_not_read(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    name, required = sorted(api.keys(world).by_chunk.items())[0]
    chunk = ChunkKeys(name, world.level_of(name), 0, dict(required.keys), [], [])
    summary, draws = chunk.to_records()
    with pytest.raises(TypeError):
        ChunkKeys.from_records(summary, {}, draws, lambda d: None)
    wrong = dict.fromkeys(chunk.definitions(), next(iter(chunk.definitions().values())))
    if len(set(chunk.definitions())) > 1:
        with pytest.raises(ValueError, match="not the key its hash names"):
            ChunkKeys.from_records(summary, {}, draws, wrong.get)


def test_an_evaluation_decoded_once_serves_the_later_cooks_of_the_process(tmp_path: Path, monkeypatch) -> None:
    from pipeline.keys import chunk_keys
    from pipeline.keys.evaluate import evaluate

    monkeypatch.setattr(chunk_keys, "_DECODED", {})
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    with world.open_store() as store:
        first = chunk_keys.StoredEvaluations(store, "base")
        first[("facts",)] = uses = list(evaluate(world.rulesets, api.scan(world).draws[0].facts))
        reads = []
        real = store.get
        monkeypatch.setattr(store, "get", lambda *a: reads.append(a) or real(*a))
        assert chunk_keys.StoredEvaluations(store, "base").get(("facts",)) is uses and reads == []
        chunk_keys._DECODED.clear()  # another process: read from the store and decoded
        again = chunk_keys.StoredEvaluations(store, "base").get(("facts",))
        assert again is not uses and [kind for kind, _ in reads] == [EVALUATIONS]  # its traces not read yet
        assert again == uses  # and read when compared
        traces = {u.trace.text for u in again}
        assert {kind for kind, _ in reads} == {EVALUATIONS, TRACES} and len(reads) == 1 + len(traces)  # each once
        assert chunk_keys.StoredEvaluations(store, "other rules").get(("facts",)) is None


def test_a_chunk_s_stored_evaluations_are_read_together(tmp_path: Path, monkeypatch) -> None:
    from pipeline.keys import chunk_keys
    from pipeline.keys.evaluate import evaluate

    monkeypatch.setattr(chunk_keys, "_DECODED", {})
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    draws = api.scan(world).draws
    with world.open_store() as store:
        first = chunk_keys.StoredEvaluations(store, "base")
        for i, draw in enumerate(draws[:3]):
            first[(i,)] = list(evaluate(world.rulesets, draw.facts))
        chunk_keys._DECODED.clear()  # another process
        get = store.get
        monkeypatch.setattr(store, "get", lambda kind, key: get(kind, key) if kind is TRACES  # read when compared
                            else pytest.fail("an evaluation read alone"))
        asked = []
        get_many = store.get_many
        monkeypatch.setattr(store, "get_many", lambda kind, keys: asked.append(len(keys)) or get_many(kind, keys))
        later = chunk_keys.StoredEvaluations(store, "base")
        later.prefetch([(0,), (1,), (2,), (9,)])
        assert asked == [4]
        assert [later.get((i,)) for i in range(3)] == [first[(i,)] for i in range(3)]
        assert later.get((9,)) is None  # none stored: known absent, not asked again
