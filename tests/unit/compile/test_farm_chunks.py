"""Chunk work for the build farm (compile/farm_chunks.py), the worker's function run in this process: the
records a worker sends, stored by the cook, are the records the cook would have made; a worker that sees
other files, or runs other code, refuses."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from paths import REPO

sys.path.insert(0, str(REPO / "bench"))

import worldgen  # noqa: E402

from pipeline import api  # noqa: E402
from pipeline.cache.store import Store  # noqa: E402
from pipeline.compile import farm_chunks  # noqa: E402
from pipeline.keys import chunk_pool, incremental  # noqa: E402
from pipeline.keys.required import optional_facts  # noqa: E402

LIBRARY = {"rules": REPO / "rules", "materials": REPO / "materials"}


@pytest.fixture
def world(tmp_path: Path):
    root = tmp_path / "world"
    worldgen.generate(root, worldgen.WorldSpec(chunks=3, files_per_chunk=4, props=8))
    farm_chunks._WORK.clear()  # a worker process's chunk work, kept between its tasks
    yield api.open_world(root, **LIBRARY)
    farm_chunks._WORK.clear()


def task_inputs(world) -> tuple:
    """What the cook sends a worker: the world as a worker opens it, its root, the base, the optional facts,
    the chunks and their fingerprints."""
    optional = optional_facts(world.rulesets)
    base = incremental.world_base(world, world.root, optional)
    chunks = world.select().chunks
    prints = [incremental.chunk_fingerprint(world, world.root, c, base) for c in chunks]
    return farm_chunks._portable(world), world.root, base, optional, chunks, prints


def test_a_worker_s_records_stored_by_the_cook_are_its_own_records(world, tmp_path: Path, monkeypatch) -> None:
    found, records, reasons = farm_chunks.chunk_task(*task_inputs(world))
    assert reasons == [] and len(found) == 3 and all(done is not None for done in found)
    assert {name.split(":")[0] for name in records} == {k.namespace for k in chunk_pool.CHUNK_RECORDS}
    with Store(tmp_path / "local") as store:
        local = incremental.cook_input(world, store)

    def computed(*args, **kwargs):
        raise AssertionError("a chunk was scanned here: its records should have been found")
    monkeypatch.setattr(incremental, "compute_chunks", computed)
    with Store(tmp_path / "farm") as store:
        assert store.set_raw(records, chunk_pool.CHUNK_RECORDS) == len(records)
        farmed = incremental.cook_input(world, store)
    assert (farmed.chunks, farmed.draws, farmed.fingerprints) == (local.chunks, local.draws, local.fingerprints)
    assert list(farmed.keys) == list(local.keys) and farmed.by_chunk == local.by_chunk
    assert farmed.diagnostics == local.diagnostics


def test_a_worker_that_sees_another_file_refuses_that_chunk_alone(world) -> None:
    portable, root, base, optional, chunks, prints = task_inputs(world)
    changed = root / chunks[1].files[0]
    changed.write_bytes(changed.read_bytes() + b" ")  # as a worker with an older copy of the depot would see it
    found, records, reasons = farm_chunks.chunk_task(portable, root, base, optional, chunks, prints)
    assert [done is None for done in found] == [False, True, False]
    assert reasons == ["a worker sees other files than the cook (the world at another path, or changed)"]
    assert records  # the other two chunks' records


def test_a_worker_running_other_code_or_rules_refuses_every_chunk(world) -> None:
    portable, root, base, optional, chunks, prints = task_inputs(world)
    found, records, reasons = farm_chunks.chunk_task(portable, root, "another base", optional, chunks, prints)
    assert found == [None] * 3 and records == {}
    assert reasons == ["a worker runs other code, or sees other rule sets or configuration, than the cook"]


def test_few_missed_files_and_a_cluster_on_this_machine_leave_the_chunks_here() -> None:
    chunks = farm_chunks.FarmChunks(connection=SimpleNamespace(kind="remote"), min_files=10)
    one = SimpleNamespace(files=tuple(range(20)))
    assert not chunks.wanted([one])  # one chunk: a round trip for nothing
    assert not chunks.wanted([SimpleNamespace(files=(1, 2)), SimpleNamespace(files=(3,))])
    assert chunks.wanted([one, SimpleNamespace(files=(1,))])
    here = farm_chunks.FarmChunks(connection=SimpleNamespace(kind="local"), min_files=10)
    assert not here.wanted([one, one])  # local:N: this machine's cores, which the forked pool shares


def test_the_cook_says_what_the_farm_did_of_its_chunks(monkeypatch) -> None:
    farm = farm_chunks.FarmCook("local:1")  # no cluster starts until something is sent
    result = SimpleNamespace(farm=None, warnings=[])
    assert farm.report(result) is result and result.farm is None  # nothing sent: nothing said
    farm.chunks.stats = farm_chunks.ChunkStats(sent=5, done=3, refused=2, batches=2,
                                               reasons=["a worker sees other files than the cook"])
    farm.report(result)
    assert result.farm == {"scheduler": "local:1", "chunks": {"sent": 5, "done": 3, "refused": 2, "failed": 0,
                                                              "batches": 2, "wall_s": 0.0,
                                                              "client_s": 0.0,
                                                              "reasons": ["a worker sees other files than the cook"]}}
    assert result.warnings == ["local:1: 2 of 5 chunks were scanned on this machine: "
                               "a worker sees other files than the cook"]
    with farm:
        pass
    assert not farm.connection.connected
