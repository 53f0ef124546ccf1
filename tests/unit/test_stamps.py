"""``pipeline.stamps``: the one file stamp and the one "dirty, and why" decision."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.stamps import of_stat, stamp_of, why_dirty


def rewrite_in_place(path: Path, data: bytes, mtime_ns: int) -> None:
    """Write ``data`` into ``path`` (same inode) and put its mtime back to ``mtime_ns``, until its ctime
    moved past the one it had (a file system's ctime may tick coarser than the writes)."""
    ctime = path.stat().st_ctime_ns
    for _ in range(200):
        with open(path, "r+b") as f:
            f.write(data)
            f.truncate()
        os.utime(path, ns=(path.stat().st_atime_ns, mtime_ns))
        if path.stat().st_ctime_ns != ctime:
            return
        time.sleep(0.005)
    pytest.fail("the file system never moved the ctime")


@pytest.fixture
def file(tmp_path: Path) -> Path:
    path = tmp_path / "a.bin"
    path.write_bytes(b"0123456789")
    return path


def test_a_stamp_is_mtime_size_inode_ctime_and_none_when_missing(file: Path) -> None:
    st = os.stat(file)
    assert stamp_of(file) == of_stat(st) == (st.st_mtime_ns, 10, st.st_ino, st.st_ctime_ns)
    assert stamp_of(file.with_name("nothing")) is None
    assert stamp_of("bad\0path") is None


def test_an_untouched_file_is_current_also_from_a_stored_stamp(file: Path) -> None:
    recorded = stamp_of(file)
    assert why_dirty(recorded, stamp_of(file)) is None
    assert why_dirty(json.loads(json.dumps(recorded)), stamp_of(file)) is None  # stored as a JSON list


@pytest.mark.parametrize("recorded", [None, [], "stamp", [1, 2, 3], [1, 2, 3, 4, 5], [1, 2, 3, "4"],
                                      [1.0, 2, 3, 4], [True, 2, 3, 4]])
def test_anything_but_a_stamp_of_four_integers_is_not_recorded(file: Path, recorded) -> None:
    assert why_dirty(recorded, stamp_of(file)) == "not recorded"


def test_an_old_three_field_stat_of_the_same_file_is_not_recorded(file: Path) -> None:
    st = os.stat(file)
    assert why_dirty([st.st_mtime_ns, st.st_size, st.st_ino], stamp_of(file)) == "not recorded"


def test_a_removed_file_is_missing(file: Path) -> None:
    recorded = stamp_of(file)
    file.unlink()
    assert why_dirty(recorded, stamp_of(file)) == "missing"


def test_a_grown_file_changed_size(file: Path) -> None:
    recorded = stamp_of(file)
    with open(file, "ab") as f:
        f.write(b"x")
    assert why_dirty(recorded, stamp_of(file)) == "size changed"


def test_a_same_size_edit_with_a_new_mtime_is_modified(file: Path) -> None:
    recorded = stamp_of(file)
    file.write_bytes(b"abcdefghij")
    os.utime(file, ns=(recorded[0] + 10**9, recorded[0] + 10**9))
    assert why_dirty(recorded, stamp_of(file)) == "modified (mtime)"


def test_a_same_size_edit_with_its_mtime_put_back_changed_in_place(file: Path) -> None:
    recorded = stamp_of(file)
    rewrite_in_place(file, b"abcdefghij", recorded[0])
    now = stamp_of(file)
    assert now[:3] == recorded[:3]  # size, mtime and inode alone would call it current
    assert why_dirty(recorded, now) == "changed in place (ctime)"


def test_a_file_renamed_over_it_with_size_and_mtime_kept_is_replaced(file: Path) -> None:
    recorded = stamp_of(file)
    other = file.with_name("b.bin")
    other.write_bytes(b"abcdefghij")
    os.utime(other, ns=(recorded[0], recorded[0]))
    os.replace(other, file)  # the old inode is freed only now: the new file cannot have reused it
    assert why_dirty(recorded, stamp_of(file)) == "replaced (inode)"


def test_the_first_difference_names_the_reason(file: Path) -> None:
    mtime, size, inode, ctime = stamp_of(file)
    now = (mtime, size, inode, ctime)
    assert why_dirty((mtime + 1, size + 1, inode + 1, ctime + 1), now) == "size changed"
    assert why_dirty((mtime + 1, size, inode + 1, ctime + 1), now) == "modified (mtime)"
    assert why_dirty((mtime, size, inode + 1, ctime + 1), now) == "replaced (inode)"


def test_the_module_loads_the_standard_library_alone() -> None:
    probe = ("import sys; before = set(sys.modules); import pipeline.stamps; "
             "print('\\n'.join(sorted(set(sys.modules) - before)))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    loaded = {name.split(".")[0] for name in done.stdout.split()}
    assert "pipeline" in loaded
    assert loaded - {"pipeline"} <= set(sys.stdlib_module_names), loaded
