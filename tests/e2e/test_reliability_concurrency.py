"""Concurrency: cooks sharing one cache, and readers during a cook, with real processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from robust_helpers import check_readable, cli, cook, copy_world, outputs, run_cli

from pipeline.outputs import write_chunk, write_level
from pipeline.outputs.manifest import load_chunk_manifest, load_level_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, PakReader

TIMEOUT = 180


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return copy_world(tmp_path_factory.mktemp("concurrency") / "world")


def start_cook(world: Path, cache: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(cli("cook", world, "--cache", cache, "--out", out, "--jobs", "1", "-q", *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> None:
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr


@pytest.mark.parametrize("chunks", [("forest/c00", "town/market"), ("forest/c01", "forest/c01")],
                         ids=["different chunks", "same chunk"])
def test_two_cooks_at_once_on_one_cache_match_a_serial_cook(world, tmp_path, chunks):
    cache, out = tmp_path / "cache", tmp_path / "out"
    both = [start_cook(world, cache, out, "--chunk", chunk) for chunk in chunks]
    for process in both:
        finish(process)
    serial_cache, serial_out = tmp_path / "serial-cache", tmp_path / "serial-out"
    for chunk in chunks:
        assert cook(world, serial_cache, serial_out, chunk=chunk).errors == []
    check_readable(out)
    assert outputs(out) == outputs(serial_out)
    again = cook(world, cache, tmp_path / "again")
    assert again.errors == [] and again.warnings == [], "the shared cache is intact"


@pytest.mark.slow
def test_two_whole_world_cooks_at_once_into_one_out_folder(world, tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    both = [start_cook(world, cache, out) for _ in range(2)]
    for process in both:
        finish(process)
    reference = tmp_path / "reference"
    assert cook(world, tmp_path / "ref-cache", reference).errors == []
    check_readable(out)
    assert outputs(out) == outputs(reference)
    warm = cook(world, cache, tmp_path / "warm")
    assert warm.run.compiled == [] and warm.warnings == [] and outputs(tmp_path / "warm") == outputs(reference)


@pytest.mark.slow
def test_readers_during_a_cook_never_see_a_half_written_state(world, tmp_path):
    """Keys and scans run against the cook's cache and the outputs are read in a loop while it writes."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    changed = tmp_path / "changed"
    shutil.copytree(world, changed)
    (changed / "forest" / "c00" / "trees.glb").unlink()
    assert cook(changed, cache, out).errors == []  # older outputs for the cook below to replace
    expected_keys = json.loads(run_cli("keys", world, "--json", "--cache", tmp_path / "keys-cache").stdout)

    process = start_cook(world, tmp_path / "fresh-cache", out)
    keys = subprocess.Popen(cli("keys", world, "--json", "--cache", tmp_path / "fresh-cache"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    scans = subprocess.Popen(cli("scan", world, "--json", "--cache", tmp_path / "fresh-cache"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reads = 0
    while process.poll() is None:
        check_readable(out)
        reads += 1
    finish(process)
    documents = []
    for reader in (keys, scans):
        stdout, stderr = reader.communicate(timeout=TIMEOUT)
        assert reader.returncode == 0 and "Traceback" not in stderr, stderr[-2000:]
        documents.append(json.loads(stdout))
    assert documents[0] == expected_keys
    assert reads > 0
    reference = tmp_path / "reference"
    assert cook(world, tmp_path / "ref-cache", reference).errors == []
    assert outputs(out) == outputs(reference)


@pytest.mark.slow
def test_cooks_of_two_chunks_of_one_level_never_drop_a_chunk_from_the_level_manifest(world, tmp_path, monkeypatch):
    """The unlucky interleaving, forced: A reads the level's chunks, B writes its chunk and the level, A writes."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    assert cook(world, cache, tmp_path / "warm").errors == []
    a_read, b_wrote_level = threading.Event(), threading.Event()
    real_level_chunks, real_chunk = write_level.level_chunks, write_chunk.write_built
    real_level = write_level.write_level_manifest

    def level_chunks(folder, level):
        found = real_level_chunks(folder, level)
        if threading.current_thread().name == "A":
            a_read.set()
            b_wrote_level.wait(3)
        return found

    def write_index(*args):
        if threading.current_thread().name == "B":
            a_read.wait(3)
        return real_chunk(*args)

    def write_level_manifest(folder, manifest):
        try:
            return real_level(folder, manifest)
        finally:
            if threading.current_thread().name == "B":
                b_wrote_level.set()

    monkeypatch.setattr(write_level, "level_chunks", level_chunks)
    monkeypatch.setattr(write_chunk, "write_built", write_index)
    monkeypatch.setattr(write_level, "write_level_manifest", write_level_manifest)
    results = {}

    def cook_chunk(chunk: str) -> None:
        results[chunk] = cook(world, cache, out, chunk=chunk)

    threads = [threading.Thread(target=cook_chunk, name=name, args=(chunk,))
               for name, chunk in (("A", "forest/c00"), ("B", "forest/c01"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=TIMEOUT)
    assert sorted(results) == ["forest/c00", "forest/c01"] and all(r.errors == [] for r in results.values())
    assert sorted(load_level_manifest(out / "forest.level.json").chunks) == ["forest/c00", "forest/c01"]
    library = PakReader(out / LIBRARY_NAME)  # neither cook's settle dropped the other's blobs
    assert library.chunks == {c: stage_hashes(load_chunk_manifest(out / f"{c}.json")) for c in results}
    check_readable(out)
