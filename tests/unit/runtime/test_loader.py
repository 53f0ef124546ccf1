"""Chunk loading on lavapipe: chunk index + shader library -> modules and pipelines, draws -> pipelines, misses logged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime_helpers import chunk_index, cook_twin_chunks, fail_key, needs_vulkan
from library_helpers import write_library
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakError, PakReader
from pipeline.outputs.contract import DRAW_FIELDS
from pipeline.runtime.device import Device
from pipeline.runtime.loader import Failure, Loader
from pipeline.runtime.misses import MissLog, read_log

pytestmark = needs_vulkan
FORWARD = "pbr/forward"


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return cook_twin_chunks(tmp_path_factory.mktemp("loader"))


def doc(out: Path, chunk: str = "c02") -> mf.ChunkManifest:
    return chunk_index(out, chunk)


def draw_id(record: dict) -> tuple:
    return tuple(record[f] for f in DRAW_FIELDS)


def test_load_creates_a_module_per_blob_and_a_pipeline_per_state(out: Path) -> None:
    manifest = doc(out)
    with Device(validation=True) as device:
        loader = Loader(device, out)
        try:
            loaded = loader.load("c02")
            assert loader.load("c02") is loaded  # loaded once
            assert set(loaded.modules) == {d for e in manifest.keys.values() for d in e.stages.values()}
            assert set(loaded.pipelines) == set(manifest.pipelines) and loaded.failures == []
            assert set(loaded.manifest.reflection) == set(loaded.modules)  # from the library
            other = loader.load("c03")
            assert all(other.pipelines[p] is loaded.pipelines[p] for p in loaded.pipelines)  # shared by id
            assert len(loader.created) == len(manifest.pipelines)
        finally:
            loader.close()
    assert device.messages == []


def test_pipeline_for_a_cooked_draw_uses_its_own_pipeline(out: Path, tmp_path: Path) -> None:
    manifest = doc(out)
    record = manifest.draws[0]
    use = record["passes"][FORWARD]
    log = tmp_path / "misses.jsonl"
    with Device(validation=True) as device:
        loader = Loader(device, out, MissLog(log))
        try:
            created, state, fell_back = loader.pipeline_for("c02", draw_id(record), FORWARD)
            assert not fell_back and state == manifest.pipelines[use["pipeline"]]
            assert created is loader.load("c02").pipelines[use["pipeline"]] and created.color
            assert loader.load("c02").draw(draw_id(record))["passes"] == record["passes"]
        finally:
            loader.close()
    assert log.read_bytes() == b""


def test_a_draw_the_chunk_does_not_know_is_a_miss_without_a_pipeline(out: Path, tmp_path: Path) -> None:
    log = tmp_path / "misses.jsonl"
    unknown = ("c02/cabin.gltf", 999, 0, 0, None, None)
    with Device(validation=True) as device:
        loader = Loader(device, out, MissLog(log))
        try:
            assert loader.pipeline_for("c02", unknown, FORWARD) == (None, None, True)
        finally:
            loader.close()
    ((line, record),) = read_log(log)
    assert (record["key"], record["chunk"], record["pass"]) == (None, "c02", FORWARD)
    assert draw_id(record["draw"]) == unknown


def test_a_key_that_failed_to_compile_takes_the_pass_fallback_and_is_logged(out: Path, tmp_path: Path) -> None:
    manifest = doc(out)
    record = manifest.draws[0]
    use = record["passes"][FORWARD]
    own = manifest.keys[use["key"]].stages
    fallback_key = manifest.pipelines[use["fallback"]]["key"]
    others = {d for k, e in manifest.keys.items() if k != use["key"] for d in e.stages.values()}
    dropped = set(own.values()) - others  # its runtime axis variants share its vertex blob
    assert dropped, "the draw's key shares every blob with the fallback"
    broken = tmp_path / "out"
    shutil.copytree(out, broken)
    fail_key(broken, "c02", use["key"])
    log = tmp_path / "misses.jsonl"
    with Device(validation=True) as device:
        loader = Loader(device, broken, MissLog(log))
        try:
            created, state, fell_back = loader.pipeline_for("c02", draw_id(record), FORWARD)
            loaded = loader.load("c02")
            assert fell_back and state == manifest.pipelines[use["fallback"]]
            assert created is loaded.pipelines[use["fallback"]]
            assert use["pipeline"] not in loaded.pipelines and not dropped & set(loaded.modules)
        finally:
            loader.close()
    ((_, logged),) = read_log(log)
    assert logged["key"] == use["key"] and draw_id(logged["draw"]) == draw_id(record)


def test_a_library_lacking_a_blob_of_the_index_is_an_error_not_a_silent_fallback(out: Path, tmp_path: Path) -> None:
    manifest = doc(out)
    broken = tmp_path / "out"
    shutil.copytree(out, broken)
    library = PakReader(mf.library_path(broken))
    lost = sorted(mf.stage_hashes(manifest))[0]
    kept = {d: b for d, b in library.items() if d != lost}
    write_library(mf.library_path(broken), kept, {d: library.reflection(d) for d in kept},
                  {c: used - {lost} for c, used in library.chunks.items()})
    with Device(validation=True) as device:
        loader = Loader(device, broken)
        try:
            with pytest.raises(PakError) as info:
                loader.load("c02")
        finally:
            loader.close()
    assert lost[:12] in info.value.diagnostics[0].message
    assert info.value.diagnostics[0].location.file == str(mf.library_path(broken))


def test_failure_to_json() -> None:
    assert Failure("c", "p", "k", "m").to_json() == {"chunk": "c", "pipeline": "p", "key": "k", "message": "m"}


def test_pick_takes_the_row_of_the_axis_values_or_names_what_was_asked() -> None:
    from pipeline.runtime.loader import pick

    rows = [{"values": {"QUALITY": "HIGH", "SHADOWS": False}, "key": "k0", "pipeline": "p0"},
            {"values": {"QUALITY": "HIGH", "SHADOWS": True}, "key": "k1", "pipeline": "p1"}]
    use = {"key": "k0", "pipeline": "p0", "axes": rows}
    assert pick(use, None) == (use, None) and pick({"key": "k"}, {"SHADOWS": True}) == ({"key": "k"}, None)
    assert pick(use, {"SHADOWS": True}) == (rows[1], None)  # QUALITY: the pass's own (first) combination's
    assert pick(use, {"QUALITY": "LOW"}) == (None, {"QUALITY": "LOW", "SHADOWS": False})
    assert pick(use, {"SHADOWS": 1}) == (None, {"QUALITY": "HIGH", "SHADOWS": 1})  # 1 is not true
