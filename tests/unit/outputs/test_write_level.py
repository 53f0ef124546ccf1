"""A level's union manifest brought up to date from its chunk manifests on disk (outputs/write_level.py)."""

from __future__ import annotations

import json
import os

import pytest

from pipeline.cache.store import Store
from pipeline.digest import bytes_hash
from pipeline.outputs import manifest as mf
from pipeline.outputs.write_chunk import write_chunk_outputs
from pipeline.outputs.write_level import LevelWrite, level_chunks, update_level

BLOB = b"\x03\x02\x23\x07blob"


def entry(key: str, draws: int = 1) -> mf.ManifestEntry:
    return mf.ManifestEntry(key=key, hash=bytes_hash(key.encode()), shader="pbr", pass_name="forward",
                            features={}, stages={"fragment": bytes_hash(BLOB)}, draws=draws)


def write_chunk(out, chunk: str, draws: int = 1) -> None:
    write_chunk_outputs(out, mf.chunk_manifest(chunk, "forest", [entry("pbr/forward{}", draws)]),
                        {bytes_hash(BLOB): BLOB})


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "cache") as s:
        yield s


def test_a_new_level_manifest_unites_its_chunks(tmp_path, store):
    out = tmp_path / "out"
    write_chunk(out, "forest/c00")
    write_chunk(out, "forest/c01", draws=2)
    done = update_level("forest", ["forest/c00", "forest/c01"], store, out)
    assert (done.reason, done.written) == ("new", True)
    doc = json.loads(done.path.read_text())
    assert sorted(doc["chunks"]) == ["forest/c00", "forest/c01"] and doc["keys"]["pbr/forward{}"]["draws"] == 3
    assert [m.chunk for m in level_chunks(out, "forest")] == ["forest/c00", "forest/c01"]


def test_an_unchanged_level_is_not_rebuilt(tmp_path, store):
    out = tmp_path / "out"
    write_chunk(out, "forest/c00")
    update_level("forest", ["forest/c00"], store, out)
    assert update_level("forest", ["forest/c00"], store, out) == LevelWrite(mf.level_manifest_path(out, "forest"))


def test_a_changed_chunk_manifest_rebuilds_the_level_and_says_why(tmp_path, store):
    out = tmp_path / "out"
    write_chunk(out, "forest/c00")
    update_level("forest", ["forest/c00"], store, out)
    write_chunk(out, "forest/c00", draws=5)
    done = update_level("forest", ["forest/c00"], store, out)
    assert (done.reason, done.written) == ("inputs changed: chunk manifests", True)
    assert json.loads(done.path.read_text())["keys"]["pbr/forward{}"]["draws"] == 5


def test_an_edited_level_manifest_is_written_back(tmp_path, store):
    out = tmp_path / "out"
    write_chunk(out, "forest/c00")
    path = update_level("forest", ["forest/c00"], store, out).path
    good = path.read_bytes()
    path.write_bytes(good + b" ")  # its size differs, whatever the clock did
    done = update_level("forest", ["forest/c00"], store, out)
    assert done.reason.startswith("modified on disk (") and done.reason.endswith("): forest.level.json")
    assert done.written and path.read_bytes() == good


def test_a_rebuild_with_the_same_bytes_writes_nothing(tmp_path, store):
    out = tmp_path / "out"
    write_chunk(out, "forest/c00")
    path = update_level("forest", ["forest/c00"], store, out).path
    path.unlink()
    assert update_level("forest", ["forest/c00"], store, out).reason == "file missing: forest.level.json"
    chunk = out / "forest" / "c00.json"
    st = os.stat(chunk)
    os.utime(chunk, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a chunk manifest's stat changes, not its bytes
    done = update_level("forest", ["forest/c00"], store, out)
    assert (done.reason, done.written) == ("inputs changed: chunk manifests", False)
