"""Fact parts shared across files and chunks, and what a worker forgets when a chunk is done."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import Limits
from pipeline.scan.gltf import shared_facts
from pipeline.scan.gltf.draws import draws_of
from pipeline.scan.gltf.reader import parse_gltf
from pipeline.scan.gltf.shared_facts import SharedFacts

ACCESSOR = {"componentType": 5126, "count": 3, "type": "VEC3"}
DOC = {
    "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0, 1]}],
    "nodes": [{"mesh": 0}, {"mesh": 0, "scale": [-1, 1, 1]}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]}],
    "materials": [{"alphaMode": "MASK"}], "accessors": [ACCESSOR],
}


def gltf():
    return parse_gltf(json.dumps(DOC).encode(), Path("f.gltf"), "f.gltf", Limits())


def chunk_of(inst):
    return "lvl/c", "lvl"


def test_a_chunk_done_forgets_what_no_other_chunk_shares(monkeypatch) -> None:
    shared = SharedFacts()
    one = draws_of(gltf(), chunk_of, shared=shared)
    assert shared.draws and shared.chunks and shared.scenes
    shared.end_chunk()
    assert not shared.draws and not shared.chunks and not shared.scenes
    assert shared.meshes and shared.nodes  # another chunk's files share these
    kept = {id(made) for table in (shared.meshes, shared.nodes, shared.infos) for made, _ in table.values()}
    assert set(shared.canonical) == kept | {id(made) for made, _ in shared.materials.parts()} | {
        id(shared.default_material[0])}
    two = draws_of(gltf(), lambda inst: ("lvl/d", "lvl"), shared=shared)
    fresh = draws_of(gltf(), lambda inst: ("lvl/d", "lvl"))
    assert [(d.facts, d.signature) for d in two] == [(d.facts, d.signature) for d in fresh]
    assert two[0].facts.mesh is one[0].facts.mesh and two[0].signature != one[0].signature
    monkeypatch.setattr(shared_facts, "MAX_PARTS", 0)  # past the bound, every kind of part starts afresh
    shared.end_chunk()
    assert not shared.meshes and not shared.nodes and not shared.materials.parts()
    assert set(shared.canonical) == {id(made) for made, _ in shared.infos.values()} | {id(shared.default_material[0])}
