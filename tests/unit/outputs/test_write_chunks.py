"""Chunk indexes built on the pool: the same files and cook document as built in the cook's process,
with no index built in the cook's process; a chunk a worker fails on is built (and reported) here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.outputs import manifest as mf
from pipeline.outputs import write_chunks
from pipeline.outputs.write_chunk import ChunkWrite
from pipeline.outputs.write_level import Part
from paths import REPO, SAMPLE_WORLD


@pytest.fixture
def world(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE_WORLD, tmp_path / "world")
    return tmp_path / "world"


def cook(world: Path, base: Path, monkeypatch, pool: bool, fail_in_worker: str | None = None) -> tuple[dict, list]:
    """A cook with indexes built on a pool of 2 (``pool``) or here; (its document, chunks built here)."""
    here: list[str] = []
    build = write_chunks.write_built
    parent = os.getpid()

    def spy(jobs, chunk, *args):
        if os.getpid() == parent:
            here.append(chunk)
        elif chunk == fail_in_worker:
            raise OSError("a worker that cannot build this chunk")
        return build(jobs, chunk, *args)

    with monkeypatch.context() as patch:
        patch.setattr(write_chunks, "write_built", spy)
        patch.setattr(write_chunks, "POOL_MIN_CHUNKS", 1 if pool else 10**9)
        result = api.cook(api.open_world(world, rules=REPO / "rules", materials=REPO / "materials"),
                          cache=base / "cache", out=base / "out", jobs=2)
    doc = result.to_json()
    for name in ("duration", "timing_log", "explain"):
        doc.pop(name)
    return _relative(doc, base / "out"), here


def _relative(doc, out: Path):
    if isinstance(doc, dict):
        return {k: _relative(v, out) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_relative(v, out) for v in doc]
    return doc.replace(str(out), "OUT") if isinstance(doc, str) else doc


def files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_indexes_built_on_the_pool_are_those_built_here(world, tmp_path, monkeypatch):
    pooled, pooled_here = cook(world, tmp_path / "pool", monkeypatch, pool=True)
    alone, alone_here = cook(world, tmp_path / "alone", monkeypatch, pool=False)
    assert pooled_here == [] and len(alone_here) == 8
    assert pooled == alone and len(pooled["written"]) > 8
    assert files(tmp_path / "pool" / "out") == files(tmp_path / "alone" / "out")


def test_each_index_built_on_the_pool_is_staged_as_it_arrives(world, tmp_path, monkeypatch):
    """The cook's process holds one index's bytes at a time: each is written before the next chunk is done."""
    from pipeline.outputs.atomic import Staged

    events: list[str] = []
    real_write = Staged.write
    monkeypatch.setattr(Staged, "write", lambda self, path, data: events.append("write") or
                        real_write(self, path, data))
    real_update = write_chunks.update_chunks

    def update(*args, step=lambda: None, **kwargs):
        return real_update(*args, step=lambda: events.append("step") or step(), **kwargs)

    monkeypatch.setattr(write_chunks, "update_chunks", update)
    monkeypatch.setattr("pipeline.cook.run.update_chunks", update)
    cook(world, tmp_path, monkeypatch, pool=True)
    steps = [i for i, e in enumerate(events) if e == "step"]
    assert len(steps) == 8 and all(events[i - 1] == "write" for i in steps)


def test_a_chunk_a_worker_fails_on_is_built_here(world, tmp_path, monkeypatch):
    doc, here = cook(world, tmp_path, monkeypatch, pool=True, fail_in_worker="town/market")
    assert "town/market" in here and len(here) < 8  # its batch, built again here
    assert doc["errors"] == [] and any(p.endswith("town/market.json") for p in doc["written"])




def _built(pipelines: dict, draws: int) -> tuple:
    entry = mf.ManifestEntry(key="s/p{A=1}", hash="h", shader="s", pass_name="p", features={"A": 1},
                             stages={"vertex": "v", "fragment": "f"}, draws=draws, render_states=({"cull": "back"},))
    manifest = mf.ChunkManifest("c", "l", {"s/p{A=1}": entry}, pipelines=pipelines)
    return ChunkWrite(Path("c.json"), frozenset({"v", "f"}), keys=manifest.keys, manifest=manifest), b"data"


def test_what_the_cook_holds_of_pool_built_chunks_is_shared_and_a_chunk_naming_a_lost_document_is_built_here():
    doc = {"key": "k"}
    built = {"a": _built({"p1": doc, "p2": {"key": "j"}}, 3),
             "b": _built({"p1": None}, 5),   # a worker names what it sent before by its id
             "c": _built({"p3": None}, 1)}   # p3's document came in a batch that was lost
    shared = write_chunks._Shared()
    built = {chunk: (shared.take(result), data) for chunk, (result, data) in built.items()}
    shared.finish(built)
    assert set(built) == {"a", "b"}  # c is built again in the cook's process
    (a, _), (b, data_b) = built["a"], built["b"]
    assert b.manifest.pipelines["p1"] is a.manifest.pipelines["p1"] is doc and data_b == b"data"
    assert b.manifest.keys["s/p{A=1}"] is a.manifest.keys["s/p{A=1}"] is b.keys["s/p{A=1}"]
    assert (a.counts, b.counts) == ({"s/p{A=1}": 3}, {"s/p{A=1}": 5})  # the draws, per chunk
    level = mf.level_manifest("l", [Part("a", a.manifest.keys, a.manifest.pipelines, counts=a.counts),
                                    Part("b", b.manifest.keys, b.manifest.pipelines, counts=b.counts)])
    assert level.keys["s/p{A=1}"].draws == 8 and level.keys["s/p{A=1}"].chunks == ("a", "b")
