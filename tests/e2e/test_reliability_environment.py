"""The environment fails, not the input: full or read-only disks, paths under a regular
file, a closed pipe; and messages that must stay one bounded line.

Each is a located user error (exit 1, one line), never a traceback.  A full disk and a
read-only one are real tmpfs mounts where the test runs as root (skipped otherwise);
the ENOSPC path is also driven through the write seam so it runs everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from robust_helpers import SAMPLE, cli, cook, copy_world, run_cli

from pipeline.outputs import atomic
from pipeline.errors import PipelineError

TIMEOUT = 120


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A real tmpfs mounted at ``path`` (root only); skips the test when it cannot be mounted."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip() or 'not root'})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def one_error_line(proc, where: str, message: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(where) and ": error: " in lines[0] and message in lines[0], lines[0]


@pytest.mark.slow
def test_a_full_output_disk_is_one_located_line(tmp_path):
    with tmpfs(tmp_path / "small", "size=64k") as small:
        proc = run_cli("cook", SAMPLE, "--cache", tmp_path / "cache", "--out", small / "out", "-q", "-j", "1",
                       timeout=TIMEOUT)
        one_error_line(proc, str(small / "out"), "No space left on device")


@pytest.mark.slow
def test_a_full_cache_disk_is_one_located_line(tmp_path):
    with tmpfs(tmp_path / "small", "size=32k") as small:
        proc = run_cli("cook", SAMPLE, "--cache", small / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                       timeout=TIMEOUT)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        errors = [line for line in proc.stderr.splitlines() if not line.startswith("warning: ")]
        assert len(errors) == 1 and errors[0].startswith(str(small / "cache")), proc.stderr
        assert "full" in errors[0] or "No space left" in errors[0], proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("what", ["--out", "--cache"])
def test_a_read_only_folder_is_one_located_line(tmp_path, what):
    ro = tmp_path / "ro"
    with tmpfs(ro, "ro,size=1m"):
        out = ro / "out" if what == "--out" else tmp_path / "out"
        cache = ro / "cache" if what == "--cache" else tmp_path / "cache"
        proc = run_cli("cook", SAMPLE, "--cache", cache, "--out", out, "-q", "-j", "1", timeout=TIMEOUT)
        one_error_line(proc, str(ro / what[2:]), "Read-only file system")


@pytest.mark.slow
def test_no_space_through_the_write_seam_stops_with_one_located_error(tmp_path, monkeypatch):
    world = copy_world(tmp_path / "world")

    def full(temp, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(temp))

    monkeypatch.setattr(atomic, "_write_synced", full)
    with pytest.raises(PipelineError) as caught:
        cook(world, tmp_path / "cache", tmp_path / "out")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.location.file == str(tmp_path / "out") and "No space left" in diagnostic.message
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]  # no partial file


@pytest.mark.parametrize("what", ["--out", "--cache"])
def test_a_folder_under_a_regular_file_is_one_located_line(tmp_path, what):
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    out = blocker / "out" if what == "--out" else tmp_path / "out"
    cache = blocker / "cache" if what == "--cache" else tmp_path / "cache"
    proc = run_cli("cook", SAMPLE, "--cache", cache, "--out", out, "-q", timeout=TIMEOUT)
    one_error_line(proc, str(blocker / what[2:]), "")


@pytest.mark.slow
def test_report_output_into_an_unwritable_place_is_one_located_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_cli("report", SAMPLE, "--cache", tmp_path / "cache", "-o", blocker / "report.txt", timeout=TIMEOUT)
    one_error_line(proc, str(blocker), "Not a directory")
    with tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        proc = run_cli("report", SAMPLE, "--cache", tmp_path / "cache", "-o", ro / "report.txt", timeout=TIMEOUT)
        one_error_line(proc, str(ro / "report.txt"), "Read-only file system")


def test_keys_into_a_closed_pipe_exits_quietly(tmp_path):
    command = " ".join(f"'{a}'" for a in cli("keys", SAMPLE, "--cache", tmp_path / "cache"))
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {command} | head -n 1"], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert len(proc.stdout.splitlines()) == 1
    assert proc.stderr == "", proc.stderr  # no traceback, no "Exception ignored"
    assert proc.returncode in (0, 141)


# ---------------------------------------------------------------- one bounded line
@pytest.mark.slow
def test_a_newline_in_a_folder_name_prints_as_one_line(tmp_path):
    world = copy_world(tmp_path / "world")
    odd = world / "forest" / "bad\nchunk"
    odd.mkdir()
    (odd / "broken.gltf").write_text("{ not json")
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT, cwd=world)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("forest/bad\\nchunk/broken.gltf:1:") and ": error: " in line


@pytest.mark.slow
@pytest.mark.parametrize("where", ["asset.version", "extensionsRequired"])
def test_a_10_mb_string_gives_a_bounded_error_line(tmp_path, where):
    world = copy_world(tmp_path / "world")
    doc = json.loads((SAMPLE / "forest" / "c00" / "terrain.gltf").read_text())
    huge = "9" * 10_000_000
    if where == "asset.version":
        doc["asset"]["version"] = huge
    else:
        doc["extensionsRequired"] = doc["extensionsUsed"] = [huge]
    (world / "forest" / "c00" / "terrain.gltf").write_text(json.dumps(doc))
    proc = run_cli("cook", world, "--cache", tmp_path / "cache", "--out", tmp_path / "out", "-q", "-j", "1",
                   timeout=TIMEOUT, cwd=world)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("forest/c00/terrain.gltf: /") and len(line) < 1000
    manifest = (tmp_path / "out" / "forest" / "c00.json").read_bytes()
    assert len(manifest) < 100_000  # the error stored in the manifest is bounded too
    shutil.rmtree(tmp_path / "out")


def test_environment_errors_never_reach_the_bug_path(tmp_path):
    """An OSError escaping a command is an environment problem: exit 1, one line, no traceback."""
    os.mkfifo(tmp_path / "since.json")
    proc = run_cli("report", SAMPLE, "--cache", tmp_path / "cache", "--since", tmp_path / "since.json",
                   timeout=TIMEOUT)
    one_error_line(proc, str(tmp_path / "since.json"), "not a regular file")
