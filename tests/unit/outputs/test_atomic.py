"""Atomic output files: unchanged files untouched, crashes leave no partial file."""

from __future__ import annotations

import errno
import fnmatch
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from pipeline.outputs import atomic
from pipeline.outputs.atomic import (
    AtomicWriteError,
    cleanup_stale_temps,
    is_temp_name,
    temp_path_for,
    write_atomic,
    write_if_changed,
)

OUTPUT_PATTERNS = ["*.json", "*.pak", "*.gltf", "*.glb", "*.level.json", "*.spv"]


def _age(path, seconds: float) -> int:
    """Push the mtime of ``path`` into the past; returns the new mtime_ns."""
    stat = path.stat()
    old = stat.st_mtime_ns - int(seconds * 1e9)
    os.utime(path, ns=(old, old))
    return old


def test_write_creates_parents_and_content(tmp_path):
    target = tmp_path / "a" / "b" / "c00.json"
    write_atomic(target, b"{}\n")
    assert target.read_bytes() == b"{}\n"
    assert os.listdir(target.parent) == ["c00.json"]


def test_write_if_changed_skips_identical_bytes(tmp_path):
    target = tmp_path / "c00.pak"
    assert write_if_changed(target, b"one") is True
    old_mtime = _age(target, 100)
    assert write_if_changed(target, b"one") is False
    assert target.stat().st_mtime_ns == old_mtime
    assert write_if_changed(target, b"two") is True
    assert target.read_bytes() == b"two"
    assert target.stat().st_mtime_ns != old_mtime


def test_failed_replace_keeps_old_content_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "c00.json"
    target.write_bytes(b"old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_replace", broken_replace)
    with pytest.raises(AtomicWriteError):
        write_atomic(target, b"new" * 1000)
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["c00.json"]


def test_kill_between_temp_write_and_rename(tmp_path):
    """A real SIGKILL after the temp is written: the target is intact, the temp is hidden."""
    target = tmp_path / "c00.json"
    target.write_bytes(b"old content")
    script = textwrap.dedent(f"""
        import os, signal
        from pipeline.outputs import atomic
        atomic._replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
        atomic.write_atomic({str(target)!r}, b"new content")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == b"old content"
    leftovers = [n for n in os.listdir(tmp_path) if n != "c00.json"]
    assert len(leftovers) == 1 and is_temp_name(leftovers[0])
    assert not any(fnmatch.fnmatch(leftovers[0], p) for p in OUTPUT_PATTERNS)
    assert cleanup_stale_temps(tmp_path) == [tmp_path / leftovers[0]]
    assert os.listdir(tmp_path) == ["c00.json"]


def test_temp_names_never_match_output_patterns(tmp_path):
    for name in ["c00.json", "c00.pak", "forest.level.json", "x.glb"]:
        temp = temp_path_for(tmp_path / name)
        assert temp.parent == tmp_path
        assert temp.name.startswith(".") and is_temp_name(temp.name)
        assert not any(fnmatch.fnmatch(temp.name, p) for p in OUTPUT_PATTERNS)
    assert not is_temp_name("c00.json") and not is_temp_name(".gitignore")


def test_cleanup_keeps_live_writers_and_other_files(tmp_path):
    sub = tmp_path / "forest"
    sub.mkdir()
    live = temp_path_for(sub / "c00.json")  # this process: alive
    live.write_bytes(b"in progress")
    dead = sub / f".c01.json.tmp-{_dead_pid()}-deadbeef"
    dead.write_bytes(b"half")
    keep = [sub / ".gitignore", sub / "c01.json"]
    for path in keep:
        path.write_bytes(b"x")
    assert cleanup_stale_temps(tmp_path) == [dead]
    assert live.exists() and all(p.exists() for p in keep)


def test_cleanup_removes_old_temps_of_live_pids(tmp_path):
    old = temp_path_for(tmp_path / "c00.pak")
    old.write_bytes(b"x")
    _age(old, 7200)
    assert cleanup_stale_temps(tmp_path, max_age=3600) == [old]
    assert cleanup_stale_temps(tmp_path / "missing") == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_folder_has_one_lock_per_purpose_outside_the_folder(tmp_path):
    plain, library = atomic.lock_path_for(tmp_path), atomic.lock_path_for(tmp_path, purpose="library")
    assert plain != library and plain == atomic.lock_path_for(tmp_path / ".", "")
    assert library == atomic.lock_path_for(tmp_path, "library") != atomic.lock_path_for(tmp_path / "x", "library")
    assert tmp_path not in plain.parents and tmp_path not in library.parents
    with atomic.locked(tmp_path, purpose="library"):
        # another purpose's lock of the same folder is free meanwhile; the same purpose's is held
        probe = textwrap.dedent(f"""
            import sys
            from filelock import FileLock, Timeout
            from pipeline.outputs import atomic
            for purpose in ("", "library"):
                try:
                    with FileLock(str(atomic.lock_path_for({str(tmp_path)!r}, purpose)), timeout=0):
                        print(purpose or "plain", "free")
                except Timeout:
                    print(purpose or "plain", "held")
        """)
        proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.stdout.split("\n")[:2] == ["plain free", "library held"], proc.stderr
    assert os.listdir(tmp_path) == []


def test_a_staged_file_whose_name_cannot_exist_fails_when_staged_not_when_published(tmp_path):
    staged = atomic.Staged()
    staged.write(tmp_path / "ok.json", b"{}")
    with pytest.raises(OSError) as caught:
        staged.write(tmp_path / ("n" * 300 + ".json"), b"{}")  # its temp name would fit, the name does not
    assert caught.value.errno == errno.ENAMETOOLONG
    assert staged.publish() == [tmp_path / "ok.json"] and os.listdir(tmp_path) == ["ok.json"]
