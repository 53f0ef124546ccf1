"""The cold-scan fast paths: a process pool for chunks that miss the cache, a ``chunks`` filter,
and facts built without re-validation (equal to validated facts, same signatures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cache.store import Store
from pipeline.digest import canonical_bytes
from pipeline.facts import Draw, DrawFacts, canonical, dump, load
from pipeline.scan import scanner
from pipeline.scan import scanner as scan_module
from pipeline.scan.scanner import OPTIONAL_FACTS, ScanResult
from pipeline.world import open_world

TRIANGLE = {
    "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]}],
    "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 1]}}],
    "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}],
}


def scan(path, **options):
    """Scan the world of ``path`` (a world, chunk folder or file)."""
    return scanner.scan(open_world(path), **options)


def snapshot(result: ScanResult) -> tuple:
    """Everything a scan result says, in order, as plain data."""
    return (
        result.files, result.chunks,
        [(dump(d.source), dump(d.facts)) for d in result.draws],
        [str(d) for d in result.diagnostics],
        [result.signature(d) for d in result.draws],
        (result.files_read, result.files_parsed, result.files_cached),
    )


@pytest.fixture
def pool_calls(monkeypatch) -> list[int]:
    """Counts the pool runs (the pool itself still runs)."""
    calls: list[int] = []
    original = scan_module.scan_on_pool

    def counting(*args, **kwargs):
        calls.append(args[4])
        return original(*args, **kwargs)

    monkeypatch.setattr(scan_module, "scan_on_pool", counting)
    return calls


def small_world(root: Path, chunks: int = 6, files: int = 15) -> Path:
    for c in range(chunks):
        for f in range(files):
            doc = json.loads(json.dumps(TRIANGLE))
            doc["materials"][0]["alphaMode"] = ("OPAQUE", "MASK", "BLEND")[(c + f) % 3]
            doc["materials"][0]["doubleSided"] = f % 2 == 0
            path = root / f"l{c % 2}" / f"c{c}" / f"f{f:02d}.gltf"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc))
    (root / "l0" / "c0" / "f03.gltf").write_text("{ not json")  # one bad file: its diagnostic keeps its place
    return root


# ---------------------------------------------------------------- jobs
def test_jobs_1_and_2_give_identical_results_on_the_corpus(corpus: Path, pool_calls) -> None:
    one = scan(corpus, jobs=1)
    assert pool_calls == []
    two = scan(corpus, jobs=2)
    assert pool_calls == [2]
    assert snapshot(one) == snapshot(two)
    assert [d.facts for d in one.draws] == [d.facts for d in two.draws]


def test_jobs_with_optional_facts_and_a_bad_file(tmp_path: Path, pool_calls) -> None:
    world = small_world(tmp_path / "w")
    one = scan(world, jobs=1, optional_facts=OPTIONAL_FACTS)
    two = scan(world, jobs=2, optional_facts=OPTIONAL_FACTS)
    assert pool_calls == [2]
    assert snapshot(one) == snapshot(two)
    assert [str(d) for d in two.errors] == ["l0/c0/f03.gltf:1:3: error: invalid JSON: key must be a string"]


def test_pool_results_are_cached_by_the_parent(tmp_path: Path, pool_calls) -> None:
    world = small_world(tmp_path / "w")
    with Store(tmp_path / "cache") as store:
        cold = scan(world, store=store, jobs=2)
        warm = scan(world, store=store, jobs=2)
    assert pool_calls == [2]  # the warm scan has nothing cold: no pool
    assert (cold.files_parsed, warm.files_parsed, warm.files_cached) == (90, 0, 90)
    assert snapshot(cold)[:5] == snapshot(warm)[:5] == snapshot(scan(world, jobs=1))[:5]


def test_small_scans_stay_in_process(tmp_path: Path, pool_calls) -> None:
    world = small_world(tmp_path / "w", chunks=2, files=10)
    scan(world, jobs=2)
    assert pool_calls == []


# ---------------------------------------------------------------- chunks
def test_chunks_restricts_the_scan(tmp_path: Path) -> None:
    world = small_world(tmp_path / "w")
    full = scan(world, jobs=1)
    part = scan(world, chunks=["l1/c3", "l0/c0", "no/such"], jobs=1)
    assert part.chunks == ["l0/c0", "l1/c3"]
    assert part.files == [f for f in full.files if f.startswith(("l0/c0/", "l1/c3/"))]
    assert part.files_read == 30
    wanted = [d for d in full.draws if d.source.chunk in ("l0/c0", "l1/c3")]
    assert [dump(d) for d in part.draws] == [dump(d) for d in wanted]
    assert [str(d) for d in part.diagnostics] == [str(d) for d in full.diagnostics]
    assert scan(world, chunks=[]).draws == []
    assert scan(world, chunks=["l1/c3"], level="l0").draws == []


def test_chunks_names_grid_cells(tmp_path: Path, write_gltf) -> None:
    doc = json.loads(json.dumps(TRIANGLE))
    doc["nodes"] = [{"mesh": 0, "translation": [5, 0, 5]}, {"mesh": 0, "translation": [70, 0, 5]}]
    doc["scenes"] = [{"nodes": [0, 1]}]
    write_gltf(tmp_path / "open" / "big.gltf", doc)
    write_gltf(tmp_path / "town" / "c1" / "house.gltf", TRIANGLE)
    (tmp_path / "pipeline.toml").write_text("[levels.open]\nchunking = { grid = 64.0 }\n")
    part = scan(tmp_path, chunks={"open/x1_z0", "town/c1"})
    assert part.chunks == ["open/x1_z0", "town/c1"]
    assert [(d.source.chunk, d.source.node) for d in part.draws] == [("open/x1_z0", 1), ("town/c1", 0)]


# ---------------------------------------------------------------- facts without re-validation
def test_built_facts_equal_validated_facts_and_signatures(corpus: Path) -> None:
    result = scan(corpus, jobs=1, optional_facts=OPTIONAL_FACTS)
    seen: set[int] = set()
    for draw in result.draws:
        assert load(Draw, dump(draw)) == draw
        if id(draw.facts) in seen:
            continue
        seen.add(id(draw.facts))
        facts = draw.facts
        again = load(DrawFacts, dump(facts))
        assert again == facts and dump(again) == dump(facts)
        assert result.signature(draw) == facts.signature() == again.signature()
        for part in (facts, facts.mesh, facts.material, facts.node, facts.scene, facts.chunk):
            assert canonical(part) == canonical_bytes(dump(part))
