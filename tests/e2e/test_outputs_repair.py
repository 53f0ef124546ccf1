"""A damaged output is repaired by the next cook: real glslang, a small world in tmp_path.

- a .pak changed in place with its size and mtime put back: its ctime moved, so the next
  cook writes it again;
- ``cook --verify`` reads every pak and checks its own checksum, so it rewrites a pak whose
  bytes no longer match it even when every recorded stamp says the file is untouched (bytes
  that rot on disk change no stat), and compares every level manifest with what it should hold.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pipeline.cache.store import Store
from pipeline.outputs.pak import ENTRY, HEADER, PakReader, pak_intact
from pipeline.outputs.records import LEVEL_OUTPUTS, OUTPUTS, as_tuple, outputs_current, outputs_entry, stat_of
from robust_helpers import cook, make_world


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A cooked world: (world, cache, out)."""
    world, cache, out = tmp_path / "world", tmp_path / "cache", tmp_path / "out"
    make_world(world)
    first = cook(world, cache, out)
    assert first.ok and first.run.compiled, first.errors
    return world, cache, out


def a_pak(out: Path) -> Path:
    """The pak of the forest/c00 chunk, which holds blobs."""
    pak = out / "forest" / json.loads((out / "forest" / "c00.json").read_text())["pak"]
    assert len(PakReader(pak)) > 0
    return pak


def flipped(data: bytes) -> bytes:
    """``data`` with one byte inside its first blob flipped: same size, same header and index."""
    _, offset, size = ENTRY.unpack_from(data, HEADER.size)
    at = offset + size // 2
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Write ``data`` into ``path`` (same inode, same size) and put its mtime back, until its ctime
    moved (a file system's ctime may tick coarser than the writes)."""
    before = path.stat()
    for _ in range(200):
        with open(path, "r+b") as f:
            f.write(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        if path.stat().st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.005)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert after.st_ctime_ns != before.st_ctime_ns


def test_a_pak_changed_in_place_with_size_and_mtime_put_back_is_rewritten(site) -> None:
    world, cache, out = site
    pak = a_pak(out)
    good = pak.read_bytes()
    rewrite_in_place(pak, flipped(good))
    assert not pak_intact(pak)

    again = cook(world, cache, out)
    assert again.ok and not again.run.compiled
    assert again.written == [str(pak)]  # the pak alone: its manifest is untouched
    assert pak.read_bytes() == good
    PakReader(pak).verify()
    assert cook(world, cache, out).written == []  # repaired and recorded: the next cook writes nothing


def test_verify_rewrites_a_pak_that_fails_its_checksum_though_its_record_trusts_it(site) -> None:
    world, cache, out = site
    pak = a_pak(out)
    good = pak.read_bytes()
    pak.write_bytes(flipped(good))
    manifest = out / "forest" / "c00.json"
    with Store(cache) as store:  # bytes that rot on disk move no stamp: the record still matches the file
        key = str(manifest.resolve())
        record = as_tuple(store.get(OUTPUTS, key))
        store.set(OUTPUTS, key, outputs_entry(record[0], manifest, pak.name))
        assert outputs_current(as_tuple(store.get(OUTPUTS, key)), record[0], manifest) is None
    assert not pak_intact(pak)

    checked = cook(world, cache, out, verify=True)
    assert checked.ok and not checked.run.compiled
    assert checked.written == [str(pak)]
    assert pak.read_bytes() == good
    PakReader(pak).verify()
    assert cook(world, cache, out, verify=True).written == []  # every pak intact: nothing written


def test_verify_compares_a_level_manifest_its_record_trusts(site) -> None:
    world, cache, out = site
    level = out / "forest.level.json"
    good = level.read_bytes()
    at = good.index(b'"draws": ') + len(b'"draws": ')  # a key's draw count, one digit changed
    bad = good[:at] + (b"8" if good[at:at + 1] == b"9" else b"9") + good[at + 1:]
    assert bad != good and len(bad) == len(good)
    level.write_bytes(bad)
    with Store(cache) as store:  # the record made to match the changed file, as for bytes that rot on disk
        key = str(level.resolve())
        record = as_tuple(store.get(LEVEL_OUTPUTS, key))
        store.set(LEVEL_OUTPUTS, key, [record[0], stat_of(level)])

    checked = cook(world, cache, out, verify=True)
    assert checked.ok and checked.written == [str(level)]
    assert level.read_bytes() == good
