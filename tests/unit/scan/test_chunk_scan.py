"""Scanning one folder chunk against its scan record: reuse what did not change, read the rest."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from runtime_helpers import SAMPLE
from pipeline.config import WorldConfig
from pipeline.scan.chunk_scan import ChunkScan
from pipeline.chunks import discover
from pipeline.facts import replace

OPTIONAL = frozenset()


@pytest.fixture
def world(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE / "forest" / "c00", tmp_path / "forest" / "c00")
    return tmp_path


def scan(world: Path, old: dict | None = None, verify: bool = False) -> ChunkScan:
    config = WorldConfig()
    (chunk,) = discover(world, config)
    work = ChunkScan(world, chunk, config, OPTIONAL, old or {}, verify=verify)
    calls = []
    work.run(chunk.files, lambda: calls.append(1))
    assert len(calls) == len(chunk.files)  # one progress step per file
    return work


def sources(work: ChunkScan) -> list[tuple]:
    return [(d.source.file, d.source.node, d.source.mesh, d.source.primitive, d.source.material) for d in work.draws]


def test_a_cold_scan_reads_and_parses_every_file(world: Path) -> None:
    work = scan(world)
    files = sorted(p.relative_to(world).as_posix() for p in (world / "forest" / "c00").iterdir())
    assert (work.read, work.parsed, work.cached) == (len(files), len(files), 0)
    assert sorted(work.files) == files and work.changed()
    assert work.draws and {d.source.file for d in work.draws} == set(files)
    assert {(d.source.chunk, d.source.level) for d in work.draws} == {("forest/c00", "forest")}
    assert work.diagnostics == []
    entry = work.entry()
    assert len(entry["facts"]) == len(entry["signatures"]) == len({d.facts.signature() for d in work.draws})


def test_an_unchanged_chunk_is_reused_from_its_entry(world: Path) -> None:
    cold = scan(world)
    warm = scan(world, cold.entry())
    assert (warm.read, warm.parsed, warm.cached) == (0, 0, len(cold.files))
    assert not warm.changed()
    assert warm.draws == cold.draws


def test_verify_reads_everything_again(world: Path) -> None:
    cold = scan(world)
    again = scan(world, cold.entry(), verify=True)
    assert (again.read, again.parsed, again.cached) == (len(cold.files), len(cold.files), 0)
    assert again.draws == cold.draws


def test_a_touched_file_with_the_same_bytes_is_read_but_not_parsed(world: Path) -> None:
    cold = scan(world)
    path = world / "forest" / "c00" / "terrain.gltf"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    warm = scan(world, cold.entry())
    assert (warm.read, warm.parsed, warm.cached) == (1, 0, len(cold.files) - 1)
    assert warm.changed() and sources(warm) == sources(cold)
    assert warm.files["forest/c00/terrain.gltf"][0][0] == path.stat().st_mtime_ns  # the new stamp is recorded


def test_a_file_broken_since_keeps_its_last_good_draws_with_the_new_error(world: Path) -> None:
    cold = scan(world)
    (world / "forest" / "c00" / "terrain.gltf").write_text("{ broken")
    warm = scan(world, cold.entry())
    assert sources(warm) == sources(cold)
    assert [d.location.file for d in warm.diagnostics] == ["forest/c00/terrain.gltf"]
    again = scan(world, warm.entry())  # still broken: not parsed again, still reported, still drawn
    assert again.parsed == 0 and [d.location.file for d in again.diagnostics] == ["forest/c00/terrain.gltf"]
    assert sources(again) == sources(cold)


def test_a_new_file_that_cannot_be_read_is_an_error_without_draws(world: Path) -> None:
    (world / "forest" / "c00" / "new.gltf").write_text("[]")
    work = scan(world)
    assert "forest/c00/new.gltf" not in {d.source.file for d in work.draws}
    assert [d.location.file for d in work.diagnostics] == ["forest/c00/new.gltf"]


def test_a_file_gone_between_listing_and_reading_is_an_error(world: Path) -> None:
    config = WorldConfig()
    (chunk,) = discover(world, config)
    (world / chunk.files[0]).unlink()
    work = ChunkScan(world, chunk, config, OPTIONAL, {})
    work.run(chunk.files, lambda: None)
    assert work.diagnostics[0].location.file == chunk.files[0]
    assert work.diagnostics[0].message.startswith("cannot read: ")
    assert chunk.files[0] not in work.files


def test_a_worker_payload_rebuilds_the_same_scan(world: Path) -> None:
    work = scan(world)
    config = WorldConfig()
    (chunk,) = discover(world, config)
    rebuilt = ChunkScan.from_payload(world, chunk, config, OPTIONAL, work.payload())
    assert rebuilt.draws == work.draws and (rebuilt.read, rebuilt.parsed) == (work.read, work.parsed)


def test_intern_shares_equal_facts(world: Path) -> None:
    work = scan(world)
    facts = work.draws[0].facts
    count = len(work.facts)
    assert work.intern(facts) == work.intern(replace(facts)) and len(work.facts) == count
