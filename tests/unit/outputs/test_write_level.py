"""A level's manifest kept up to date from its chunk indexes (outputs/write_level.py), chunk by chunk."""

from __future__ import annotations

import os

import pytest

from pipeline.digest import bytes_hash
from pipeline.outputs import manifest as mf
from pipeline.outputs.write_chunk import write_now
from pipeline.outputs.write_level import LevelWrite, Part, level_chunks, update_level

BLOB, OTHER = b"\x03\x02\x23\x07blob", b"\x03\x02\x23\x07other"


def entry(key: str, draws: int = 1, blob: bytes = BLOB) -> mf.ManifestEntry:
    return mf.ManifestEntry(key=key, hash=bytes_hash(key.encode()), shader="pbr", pass_name="forward",
                            features={"A": int(key[-2])}, stages={"fragment": bytes_hash(blob)}, draws=draws)


def chunk(name: str, draws: int = 1, keys: str = "1", blob: bytes = BLOB, errors=()) -> mf.ChunkManifest:
    return mf.chunk_manifest(name, "forest", [entry(f"pbr/forward{{A={k}}}", draws, blob) for k in keys],
                             errors=errors)


def write(out, manifest: mf.ChunkManifest) -> mf.ChunkManifest:
    write_now(mf.chunk_manifest_path(out, manifest.chunk), mf.dump_json(manifest.to_json()))
    return manifest


def rebuilt(out) -> mf.LevelManifest:
    """The level manifest a rebuild from every chunk index on disk gives."""
    return mf.level_manifest("forest", level_chunks(out, "forest"))


def on_disk(out) -> mf.LevelManifest:
    return mf.load_level_manifest(mf.level_manifest_path(out, "forest"))


@pytest.fixture
def out(tmp_path):
    return tmp_path / "out"


def test_a_new_level_manifest_unites_its_chunks(out, store):
    write(out, chunk("forest/c00"))
    write(out, chunk("forest/c01", draws=2))
    done = update_level("forest", ["forest/c00", "forest/c01"], store, out)
    assert (done.reason, done.written, done.read) == ("new", True, 2)
    level = on_disk(out)
    assert level.chunks == ("forest/c00", "forest/c01") and level.keys["pbr/forward{A=1}"].draws == 3
    assert level == rebuilt(out)


def test_an_unchanged_level_is_not_rebuilt(out, store):
    write(out, chunk("forest/c00"))
    update_level("forest", ["forest/c00"], store, out)
    assert update_level("forest", ["forest/c00"], store, out) == LevelWrite(mf.level_manifest_path(out, "forest"))


def test_a_cook_of_one_chunk_reads_no_other_index_and_gives_the_bytes_of_a_rebuild(out, store):
    for n in range(5):
        write(out, chunk(f"forest/c0{n}", draws=n + 1, keys="12"[: 1 + n % 2], errors=[{"message": f"m{n}"}]))
    update_level("forest", [], store, out)
    new = write(out, chunk("forest/c02", draws=9, keys="3"))
    done = update_level("forest", ["forest/c02"], store, out, built={"forest/c02": Part(
        new.chunk, new.keys, new.pipelines, new.errors)})
    assert (done.reason, done.written, done.read) == ("inputs changed: chunk manifests", True, 0)
    assert on_disk(out) == rebuilt(out)
    assert mf.level_manifest_path(out, "forest").read_bytes() == mf.dump_json(rebuilt(out).to_json())
    assert on_disk(out).uses["forest/c02"] == ({"pbr/forward{A=3}": 9}, ())


def test_an_index_changed_behind_the_cook_s_back_is_read_again(out, store):
    write(out, chunk("forest/c00"))
    write(out, chunk("forest/c01"))
    update_level("forest", [], store, out)
    write(out, chunk("forest/c01", keys="2"))  # not a chunk this cook built
    done = update_level("forest", [], store, out)
    assert done.read == 1 and on_disk(out) == rebuilt(out)
    assert "pbr/forward{A=2}" in on_disk(out).keys and "pbr/forward{A=1}" in on_disk(out).keys


def test_a_deleted_index_leaves_the_level(out, store):
    write(out, chunk("forest/c00"))
    write(out, chunk("forest/c01", keys="2"))
    update_level("forest", [], store, out)
    mf.chunk_manifest_path(out, "forest/c01").unlink()
    done = update_level("forest", [], store, out)
    assert done.read == 0 and on_disk(out) == rebuilt(out) and on_disk(out).chunks == ("forest/c00",)


def test_an_edited_level_manifest_is_not_trusted_and_written_back(out, store):
    write(out, chunk("forest/c00"))
    path = update_level("forest", ["forest/c00"], store, out).path
    good = path.read_bytes()
    path.write_bytes(good + b" ")  # its size differs, whatever the clock did
    done = update_level("forest", ["forest/c00"], store, out)
    assert done.reason.startswith("modified on disk (") and done.reason.endswith("): forest.level.json")
    assert done.written and done.read == 1 and path.read_bytes() == good


def test_a_stale_chunk_is_listed_and_read_again_until_it_is_cooked(out, store):
    write(out, chunk("forest/c00"))
    write(out, chunk("forest/c01"))
    update_level("forest", [], store, out)
    fresh = write(out, chunk("forest/c00", blob=OTHER))  # cooked after a shader change; c01 not yet
    update_level("forest", ["forest/c00"], store, out, built={"forest/c00": fresh})
    level = on_disk(out)
    assert {"chunk": "forest/c01", "message": mf.STALE} in level.errors
    assert level.keys["pbr/forward{A=1}"].stages == {"fragment": bytes_hash(OTHER)}
    assert level.uses["forest/c01"] == ({}, ())
    write(out, chunk("forest/c01", blob=OTHER))
    done = update_level("forest", [], store, out)
    assert done.read == 1 and not on_disk(out).errors and on_disk(out) == rebuilt(out)


def test_verify_reads_every_index(out, store):
    write(out, chunk("forest/c00"))
    write(out, chunk("forest/c01"))
    update_level("forest", [], store, out)
    done = update_level("forest", [], store, out, verify=True)
    assert (done.reason, done.written, done.read) == ("differs from its chunk indexes (cook --verify)", False, 2)


def test_a_changed_stamp_with_the_same_bytes_writes_nothing(out, store):
    write(out, chunk("forest/c00"))
    path = update_level("forest", ["forest/c00"], store, out).path
    path.unlink()
    assert update_level("forest", ["forest/c00"], store, out).reason == "file missing: forest.level.json"
    index = out / "forest" / "c00.json"
    st = os.stat(index)
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # an index's stamp changes, not its bytes
    done = update_level("forest", ["forest/c00"], store, out)
    assert (done.reason, done.written, done.read) == ("inputs changed: chunk manifests", False, 1)
