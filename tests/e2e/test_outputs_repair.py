"""A damaged output is repaired by the next cook: real glslang, a small world in tmp_path.

- a .pak changed in place with its size and mtime put back: its ctime moved, so the next
  cook writes it again;
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pipeline.outputs.pak import ENTRY, HEADER, PakError, PakReader
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
    with pytest.raises(PakError):
        PakReader(pak).verify()

    again = cook(world, cache, out)
    assert again.ok and not again.run.compiled
    assert again.written == [str(pak)]  # the pak alone: its manifest is untouched
    assert pak.read_bytes() == good
    PakReader(pak).verify()
    assert cook(world, cache, out).written == []  # repaired and recorded: the next cook writes nothing

