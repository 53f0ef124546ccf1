"""The exclusive lock between processes: flock on POSIX, the same lock filelock takes; filelock elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline import locks

PROBE = textwrap.dedent("""
    import sys
    from filelock import FileLock, Timeout
    try:
        with FileLock(sys.argv[1], timeout=0):
            print("free")
    except Timeout:
        print("held")
""")


def _probe(path: Path) -> str:
    """Whether another process finds ``path`` locked, asking through filelock."""
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or done.stderr


def test_a_lock_excludes_another_process_for_the_block_alone(tmp_path: Path) -> None:
    path = tmp_path / "folder.lock"
    assert _probe(path) == "free"
    with locks.exclusive(path):
        assert _probe(path) == "held"
        assert _probe(tmp_path / "other.lock") == "free"
    assert _probe(path) == "free"


def test_a_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    path = tmp_path / "folder.lock"
    with pytest.raises(RuntimeError), locks.exclusive(path):
        raise RuntimeError("the block failed")
    assert _probe(path) == "free"


@pytest.mark.skipif(locks.fcntl is None, reason="forked descriptors are a POSIX matter")
def test_a_lock_is_released_though_a_forked_child_still_holds_the_descriptor(tmp_path: Path) -> None:
    path = tmp_path / "folder.lock"
    read, write = os.pipe()
    with locks.exclusive(path):
        child = os.fork()
        if child == 0:  # a worker forked under the lock: it outlives the block
            os.close(write)
            os.read(read, 1)
            os._exit(0)
    try:
        assert _probe(path) == "free"
    finally:
        os.write(write, b"x")
        os.waitpid(child, 0)


def test_a_lock_file_of_another_user_is_locked_through_a_read_only_descriptor(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "folder.lock"
    path.write_bytes(b"")
    real = os.open

    def refused(name, flags, *mode):
        if flags & os.O_RDWR:
            raise PermissionError(13, "Permission denied", name)
        return real(name, flags, *mode)

    monkeypatch.setattr(os, "open", refused)
    with locks.exclusive(path):
        monkeypatch.setattr(os, "open", real)
        assert _probe(path) == "held"


def test_without_fcntl_the_lock_is_filelock_s(tmp_path: Path, monkeypatch) -> None:
    import filelock

    taken = []
    monkeypatch.setattr(locks, "fcntl", None)
    monkeypatch.setattr(filelock, "FileLock", lambda name: taken.append(name) or filelock.SoftFileLock(name))
    with locks.exclusive(tmp_path / "folder.lock"):
        assert Path(tmp_path / "folder.lock").exists()
    assert taken == [str(tmp_path / "folder.lock")]
