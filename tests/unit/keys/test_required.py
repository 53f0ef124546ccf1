"""One shape for what a key is used for (``KeyUses``): evaluated draws, chunk records and manifest entries."""

from __future__ import annotations

import shutil
from pathlib import Path

from pipeline import api
from pipeline.keys import incremental
from pipeline.keys.recorded import RecordedDraw
from pipeline.keys.required import KeyUses, RequiredKeys, draw_id
from pipeline.outputs.manifest import ManifestEntry, load_chunk_manifest
from pipeline.facts import fact_fields

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "sample_world"


def test_the_cook_input_of_records_is_the_cook_input_of_a_full_evaluation(tmp_path: Path) -> None:
    world = api.open_world(SAMPLE, cache=tmp_path / "cache")
    full = incremental.from_keys(api.keys(world), world)
    with world.open_store() as store:
        incremental.cook_input(world, store)              # evaluates and records every chunk
        recorded = incremental.cook_input(world, store)   # reads every chunk back from its record
    assert recorded.by_chunk == full.by_chunk and recorded.draws == full.draws


def test_a_draw_id_names_its_draw_within_its_chunk() -> None:
    found = api.keys(SAMPLE)
    for uses in found.required.keys.values():
        for draw in uses.draws:
            back = RecordedDraw(draw_id(draw), draw.chunk, draw.level)
            assert back == draw and draw == back and hash(back) == hash(RecordedDraw(draw_id(draw), draw.chunk,
                                                                                     draw.level))
            assert all(getattr(back, name) == getattr(draw, name) for name in fact_fields(type(draw)))
            other = RecordedDraw([*draw_id(draw)[:-1], "another variant"], draw.chunk, draw.level)
            assert other != draw and draw != other


def test_uses_merge_across_chunks() -> None:
    found = api.keys(SAMPLE)
    merged = RequiredKeys.union(found.by_chunk.values())
    for key, uses in merged.keys.items():
        assert len(uses.draws) == len(uses.bindings) == sum(len(r.keys[key].draws) for r in found.by_chunk.values()
                                                            if key in r.keys)


def test_a_manifest_entry_is_made_from_the_key_s_uses(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "world")
    result = api.cook(tmp_path / "world", cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    assert result.errors == []
    world = api.open_world(tmp_path / "world")
    found = api.keys(world, cache=tmp_path / "cache")
    chunk = sorted(found.by_chunk)[0]
    manifest = load_chunk_manifest(tmp_path / "out" / f"{chunk}.json")
    for key, uses in found.by_chunk[chunk].keys.items():
        ruleset = world.families[key.shader]
        constant_ids = {name: f.constant_id for name, f in ruleset.features.items()}
        written = manifest.keys[key.text]
        made = ManifestEntry.of(key, uses, written.stages, constant_ids, written.targets)
        assert made.to_json() == written.to_json()


def test_a_projection_through_shared_parts_is_the_projection_of_each_draw() -> None:
    """Projecting each part of the facts once (mesh, material, node...) gives every draw the tuple it
    would get alone, on real scans where parts are shared between draws and where they differ."""
    from pipeline.keys.required import FactProjection
    from pipeline.scan.scanner import scan
    from paths import REPO

    for root in (SAMPLE, REPO / "corpus"):
        world = api.open_world(root)
        project = FactProjection(FactProjection.of(world.rulesets).paths)  # nothing kept yet
        draws = scan(world, jobs=1).draws
        parts: dict = {}
        shared = [project(d.facts, parts) for d in draws]
        alone = [FactProjection(project.paths)(d.facts) for d in draws]
        assert shared == alone and len(set(alone)) > 1
        kept = sum(len(part[3]) for part in project._parts)
        assert 0 < kept < len(draws) * len(project._parts)  # parts were shared, not projected per draw


def _each_path(project, facts) -> tuple:
    """The projection as its definition says: every path resolved on its own, in path order."""
    from pipeline.keys.required import _hashable
    from pipeline.rules.expr_runtime import parse_fact_path, resolve_fact_path

    return tuple(_hashable(resolve_fact_path(facts, parse_fact_path(p))) for p in project.paths)


def test_a_projection_is_every_fact_path_resolved_in_path_order() -> None:
    """The parts' values are concatenated part by part; the tuple is still the paths' values in path order,
    on the real rule sets' paths and on paths whose parts interleave when sorted (``a.b`` < ``a0.x`` <
    ``a[0]``: part ``a``'s values are not next to each other)."""
    from pipeline.keys.required import FactProjection
    from pipeline.scan.scanner import scan

    world = api.open_world(SAMPLE)
    project = FactProjection.of(world.rulesets)
    draws = scan(world, jobs=1).draws
    parts: dict = {}
    assert [project(d.facts, parts) for d in draws] == [_each_path(project, d.facts) for d in draws]

    interleaved = FactProjection(["a0.x", "a[0]", "a.b", "c", "['k']"])
    assert interleaved.paths == ("['k']", "a.b", "a0.x", "a[0]", "c")
    assert interleaved._reorder is not None  # part a's paths are apart: the concatenation is put back in order
    many = [{"a": {"b": i % 2, 0: "not an attribute"}, "a0": {"x": [i]}, "c": i % 3, "k": i} for i in range(6)]
    many.append({"a": None})
    parts = {}
    for facts in many + many:
        assert interleaved(facts, parts) == interleaved(facts) == _each_path(interleaved, facts)


def test_a_projection_keeps_frozen_parts_across_calls_and_only_those(monkeypatch) -> None:
    """The rule sets' one projection keeps each frozen part's values for later chunks (not projected
    again), starts afresh past its bound with the same results, and never keeps a mutable part."""
    import pipeline.keys.required as required
    from pipeline.keys.required import FactProjection
    from pipeline.scan.scanner import scan

    world = api.open_world(SAMPLE)
    project = FactProjection.of(world.rulesets)
    assert FactProjection.of(world.rulesets) is project
    draws = scan(world, jobs=1).draws
    first = [project(d.facts) for d in draws]
    resolved = []
    real = required.resolve_fact_path
    monkeypatch.setattr(required, "resolve_fact_path", lambda part, steps: resolved.append(1) or real(part, steps))
    assert [project(d.facts) for d in draws] == first and resolved == []  # every part was kept

    bounded = FactProjection(project.paths)
    bounded.KEPT_PARTS = 2
    assert [bounded(d.facts) for d in draws] == first == [_each_path(project, d.facts) for d in draws]
    assert resolved and all(len(part[3]) <= 2 for part in bounded._parts)

    mutable = FactProjection(["mesh.count"])
    facts = {"mesh": {"count": 1}}
    assert mutable(facts) == (1,)
    facts["mesh"]["count"] = 2
    assert mutable(facts) == (2,) and all(not part[3] for part in mutable._parts)
