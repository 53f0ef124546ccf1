"""A damaged output is repaired by the next cook: real glslang, a small world in tmp_path.

- the shader library ``shaders.pak`` changed in place with its size and mtime put back:
  ``cook --verify`` reads it whole and checks its own checksum, so it writes it again;
- ``cook --verify`` rewrites a library whose bytes no longer match its checksum even when
  every recorded stamp says the file is untouched (bytes that rot on disk change no stat),
  and compares every level manifest with what it should hold.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

import pytest

from pipeline.cache.store import Store
from pipeline.outputs.chunk_table import load_table, table_path
from pipeline.outputs.manifest import load_level_manifest
from pipeline.outputs.pak import ENTRY, HEADER, LIBRARY_NAME, PakReader, pak_intact, read_index
from pipeline.outputs.records import LEVEL_OUTPUTS, as_tuple, stat_of
from pipeline.outputs.write_library import LIBRARY, SETTLED
from pipeline.stamps import stamp_of
from robust_helpers import cook, make_world


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A cooked world: (world, cache, out)."""
    world, cache, out = tmp_path / "world", tmp_path / "cache", tmp_path / "out"
    make_world(world)
    first = cook(world, cache, out)
    assert first.ok and first.run.compiled, first.errors
    return world, cache, out


def the_library(out: Path) -> Path:
    """The output folder's shader library, which holds the blobs of forest/c00 among others."""
    library = out / LIBRARY_NAME
    assert PakReader(library).chunks["forest/c00"]
    return library


def flipped(data: bytes) -> bytes:
    """``data`` with one byte inside its first blob flipped: same size, same header and index."""
    _, offset, size, _, _ = ENTRY.unpack_from(data, HEADER.size)
    at = offset + size // 2
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


def read_index_of(data: bytes, table_beside: Path) -> tuple:
    """:func:`read_index` of library bytes whose table file is the one beside ``table_beside``."""
    reader = PakReader(data)
    return frozenset(reader.hashes()), load_table(table_path(table_beside), reader.hashes(), reader.checksum)


def load_level_manifest_of(data: bytes):
    """:func:`load_level_manifest` of a level manifest's bytes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "level.level.json"
        path.write_bytes(data)
        return load_level_manifest(path)


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


def test_verify_rewrites_a_library_changed_in_place_with_size_and_mtime_put_back(site) -> None:
    world, cache, out = site
    library = the_library(out)
    good = library.read_bytes()
    rewrite_in_place(library, flipped(good))
    assert not pak_intact(library) and read_index(library) == read_index_of(good, library)  # its index still reads

    again = cook(world, cache, out, verify=True)
    assert again.ok and not again.run.compiled
    assert again.written == [str(library)]  # the library alone: the chunk indexes are untouched
    assert [(i["path"], i.get("library")) for i in again.explain_outputs] == [(str(library), True)]
    assert library.read_bytes() == good
    PakReader(library).verify()
    assert cook(world, cache, out).written == []  # repaired and recorded: the next cook writes nothing
    assert cook(world, cache, out, verify=True).written == []


def test_a_library_changed_in_place_with_size_and_mtime_put_back_is_rewritten_by_a_plain_cook(site) -> None:
    world, cache, out = site
    library = the_library(out)
    good = library.read_bytes()
    rewrite_in_place(library, flipped(good))
    again = cook(world, cache, out)
    assert again.ok and again.written == [str(library)] and library.read_bytes() == good


def test_verify_rewrites_a_library_that_fails_its_checksum_though_its_record_trusts_it(site) -> None:
    world, cache, out = site
    library = the_library(out)
    good = library.read_bytes()
    library.write_bytes(flipped(good))
    with Store(cache) as store:  # bytes that rot on disk move no stamp: the library record matches the file
        key = str(library.resolve())
        record = store.get(LIBRARY, key)
        store.set(LIBRARY, key, [list(stamp_of(library)), record[1]])
        store.set(SETTLED, key, list(stamp_of(library)))
    assert not pak_intact(library)
    assert cook(world, cache, out).written == []  # trusted without --verify: its index and table read fine

    checked = cook(world, cache, out, verify=True)
    assert checked.ok and not checked.run.compiled
    assert checked.written == [str(library)]
    assert library.read_bytes() == good
    PakReader(library).verify()
    assert cook(world, cache, out, verify=True).written == []  # the library intact: nothing written


def test_verify_compares_a_level_manifest_its_record_trusts(site) -> None:
    world, cache, out = site
    level = out / "forest.level.json"
    good = level.read_bytes()
    at = re.search(rb'"index":"[^"]*","keys":\[\d+,(\d)', good).start(1)  # a chunk's draw count of a key, one digit changed
    bad = good[:at] + (b"8" if good[at:at + 1] == b"9" else b"9") + good[at + 1:]
    assert len(bad) == len(good)
    level.write_bytes(bad)
    assert load_level_manifest(level) != load_level_manifest_of(good)
    with Store(cache) as store:  # the record made to match the changed file, as for bytes that rot on disk
        key = str(level.resolve())
        record = as_tuple(store.get(LEVEL_OUTPUTS, key))
        store.set(LEVEL_OUTPUTS, key, [record[0], stat_of(level)])

    checked = cook(world, cache, out, verify=True)
    assert checked.ok and checked.written == [str(level)]
    assert level.read_bytes() == good and load_level_manifest(level) == load_level_manifest_of(good)
