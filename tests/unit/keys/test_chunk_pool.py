"""Chunks scanned and evaluated on the pool: the same keys, records and outputs as in the cook's process,
with no chunk's scan or rules run in the cook's process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.cache.store import Store
from pipeline.keys import chunk_pool
from pipeline.keys.records import CHUNK_KEYS
from paths import REPO, SAMPLE_WORLD

BROKEN = b'{"asset": {"version": "2.0"}, "meshes": [{"primitives": [{"attributes": {"POSITION": 7}}]}]}'


@pytest.fixture
def world(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE_WORLD, tmp_path / "world")
    (tmp_path / "world" / "forest" / "c01" / "broken.gltf").write_bytes(BROKEN)  # a located error in one chunk
    return tmp_path / "world"


def cook(world: Path, base: Path, monkeypatch, workers: int) -> tuple[dict, list[str]]:
    """A cold cook with ``workers`` chunk workers; (its --json document, chunks done in this process)."""
    here: list[str] = []
    do_chunk = chunk_pool.ChunkWork.chunk

    def spy(self, info, fingerprint):
        here.append(info.name)  # in a forked worker this list is the worker's copy
        return do_chunk(self, info, fingerprint)

    with monkeypatch.context() as patch:
        patch.setattr(chunk_pool.ChunkWork, "chunk", spy)
        patch.setattr(chunk_pool, "pool_workers", lambda jobs, files: workers)
        result = api.cook(api.open_world(world, rules=REPO / "rules", materials=REPO / "materials"),
                          cache=base / "cache", out=base / "out", jobs=1)
    doc = result.to_json()
    for name in ("duration", "timing_log", "explain", "outputs", "written", "changes", "explain_outputs"):
        doc.pop(name)
    return doc, here


def records(cache: Path) -> dict:
    with Store(cache) as store:
        return {key: store.get(CHUNK_KEYS, key) for key in store.keys(CHUNK_KEYS)}


def files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_pool_gives_what_the_cooks_process_gives(world, tmp_path, monkeypatch):
    pooled, pooled_here = cook(world, tmp_path / "pool", monkeypatch, workers=2)
    alone, alone_here = cook(world, tmp_path / "alone", monkeypatch, workers=1)
    assert pooled_here == [] and len(alone_here) == pooled["chunks"] == 8  # the pool did every chunk
    assert pooled == alone and pooled["draws"] > 0
    assert any(e["file"].endswith("broken.gltf") for e in pooled["errors"])  # located, from a worker
    assert records(tmp_path / "pool" / "cache") == records(tmp_path / "alone" / "cache") != {}
    assert files(tmp_path / "pool" / "out") == files(tmp_path / "alone" / "out")


def test_a_chunk_edited_after_a_pool_cook_is_all_that_is_done_again(world, tmp_path, monkeypatch):
    cook(world, tmp_path, monkeypatch, workers=2)
    edited = world / "town" / "market"
    shutil.copy(next(edited.glob("*.gltf")), edited / "copy.gltf")
    doc, here = cook(world, tmp_path, monkeypatch, workers=1)
    assert here == ["town/market"]
    assert doc["compiled"] == 0 and doc["chunks"] == 8
