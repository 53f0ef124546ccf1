"""``cook --dry-run``: what a cook would compile, write and remove, and why, changing nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runtime_helpers import SAMPLE
from pipeline import api
from pipeline.cook.dryrun import DryRunResult


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} \
        if folder.exists() else {}


@pytest.fixture
def world(tmp_path: Path) -> Path:
    for chunk in ("c02", "c03"):
        shutil.copytree(SAMPLE / "forest" / "c02", tmp_path / "world" / chunk)
    return tmp_path / "world"


def dry(world: Path, tmp_path: Path) -> DryRunResult:
    result = api.cook(api.open_world(world), cache=tmp_path / "cache", out=tmp_path / "out", jobs=2, dry_run=True)
    assert isinstance(result, DryRunResult)
    return result


def real(world: Path, tmp_path: Path) -> None:
    result = api.cook(api.open_world(world), cache=tmp_path / "cache", out=tmp_path / "out", jobs=2)
    assert result.ok and not result.warnings


def test_before_any_cook_every_job_compiles_and_every_output_is_new(world: Path, tmp_path: Path) -> None:
    result = dry(world, tmp_path)
    assert result.ok and result.cached == 0
    assert len(result.compile) == len(result.plan.jobs) > 0
    assert {c["reason"] for c in result.compile} and all(c["key"] and c["source"] for c in result.compile)
    chunks = [w for w in result.write if w["chunk"]]
    assert [(w["chunk"], w["reason"]) for w in chunks] == [("c02", "new"), ("c03", "new")]
    assert {Path(w["path"]).name: w["reason"] for w in result.write if w["chunk"] is None
            and not w["path"].endswith(".level.json")} == {"shaders.pak": "new", "shaders.chunks": "new"}
    assert files(tmp_path / "out") == {}  # nothing written
    doc = result.to_json()
    assert doc["dry_run"] is True and doc["required_keys"] + doc["fallback_keys"] == doc["keys"] == result.keys
    assert doc["jobs"] == len(result.plan.jobs) and doc["chunks"] == 2


def test_after_a_cook_nothing_is_left_to_do_and_nothing_changes(world: Path, tmp_path: Path) -> None:
    real(world, tmp_path)
    before = (files(tmp_path / "cache"), files(tmp_path / "out"))
    result = dry(world, tmp_path)
    assert result.compile == [] and result.write == [] and result.remove == []
    assert result.cached == len(result.plan.jobs) and result.ok
    assert (files(tmp_path / "cache"), files(tmp_path / "out")) == before


def test_a_dry_run_after_a_cook_takes_every_chunk_from_its_records(world: Path, tmp_path: Path, monkeypatch) -> None:
    """The read-only look at the cache sees the chunk records the cook stored: no chunk is scanned again."""
    from pipeline.keys import incremental

    real(world, tmp_path)
    computed = []
    monkeypatch.setattr(incremental, "compute_chunks", lambda world, store, root, missing, *a, **k:
                        computed.extend(c.name for c in missing) or [])
    result = dry(world, tmp_path)
    assert computed == [] and result.compile == [] and result.write == []


def test_a_damaged_output_would_be_written_again(world: Path, tmp_path: Path) -> None:
    real(world, tmp_path)
    manifest = tmp_path / "out" / "c03.json"
    manifest.write_bytes(manifest.read_bytes() + b"\n")  # an edit by hand
    result = dry(world, tmp_path)
    assert result.compile == []
    assert [(w["chunk"], w["reason"]) for w in result.write if w["chunk"]] == [
        ("c03", "modified on disk (size changed): c03.json")]


def test_a_new_key_would_compile_and_rewrite_its_chunk(world: Path, tmp_path: Path) -> None:
    real(world, tmp_path)
    doc = json.loads((world / "c03" / "cabin.gltf").read_text())
    for material in doc["materials"]:
        material["alphaMode"] = "BLEND"  # a feature the cooked keys do not have
    (world / "c03" / "cabin.gltf").write_text(json.dumps(doc))
    result = dry(world, tmp_path)
    assert result.compile and all(c["reason"] for c in result.compile)
    chunk_writes = [(w["chunk"], w["reason"]) for w in result.write if w["chunk"]]
    assert [c for c, _ in chunk_writes] == ["c03"] and "to compile" in chunk_writes[0][1]


def test_outputs_of_a_chunk_gone_from_the_world_would_be_removed(world: Path, tmp_path: Path) -> None:
    real(world, tmp_path)
    shutil.rmtree(world / "c03")
    result = dry(world, tmp_path)
    removed = {Path(p).name for p in result.remove}
    assert removed == {"c03.json", "c03.level.json"}  # its blobs live on in the folder's one library
    assert (tmp_path / "out" / "c03.json").exists()  # only said, not done


def test_a_dry_run_after_a_chunk_is_gone_names_what_the_cook_writes_and_removes(world: Path, tmp_path: Path) -> None:
    real(world, tmp_path)
    shutil.rmtree(world / "c03")
    said = dry(world, tmp_path)
    done = api.cook(api.open_world(world), cache=tmp_path / "cache", out=tmp_path / "out", jobs=2)
    assert sorted(said.remove) == sorted(done.removed)
    assert sorted(w["path"] for w in said.write) == sorted(done.written)


@pytest.mark.parametrize("cooked", [False, True])
def test_a_dry_run_of_a_full_evaluation_says_what_the_incremental_one_says(tmp_path: Path, cooked: bool) -> None:
    world, cache, out = tmp_path / "world", tmp_path / "cache", tmp_path / "out"
    shutil.copytree(SAMPLE, world)
    if cooked:
        api.cook(world, cache=cache, out=out, jobs=1)
        (world / "town" / "square" / "plaza.gltf").touch()  # outputs checked again, nothing to compile
    docs = [api.cook(world, cache=cache, out=out, dry_run=True, **how).to_json()
            for how in ({}, {"incremental": False}, {"verify": True})]
    assert docs[0] == docs[1] == docs[2]
    assert docs[0]["keys"] > 0 and (docs[0]["cached"] == docs[0]["jobs"]) == cooked
