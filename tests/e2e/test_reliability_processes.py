"""Real processes: Ctrl-C during a cook, kill -9 of a cook with compile workers, readers
racing a writer, and kills while a chunk's outputs are overwritten.

The number of trials is small by default so CI stays fast; ``PIPELINE_TRIALS=N``
runs N of each (the release check runs 50).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from robust_helpers import check_readable, cli, cook, copy_world, outputs

from pipeline.outputs import atomic
from pipeline.outputs.pak import PakError, PakReader

TRIALS = int(os.environ.get("PIPELINE_TRIALS", "3"))
linux_only = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to see workers")


def children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def start_cold_cook(world: Path, cache: Path, out: Path) -> subprocess.Popen:
    """A cook that compiles on a pool of two workers, in its own process group (as a terminal runs it)."""
    return subprocess.Popen(cli("cook", world, "--cache", cache, "--out", out, "--jobs", "2", "-q"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for_workers(process: subprocess.Popen, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        kids = children(process.pid)
        if kids:
            return kids
        time.sleep(0.005)
    return []


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    base = tmp_path_factory.mktemp("reference")
    world = copy_world(base / "world")
    result = cook(world, base / "cache", base / "out")
    assert result.errors == []
    return world, outputs(base / "out")


@pytest.mark.slow
@linux_only
def test_ctrl_c_during_a_cook_exits_130_with_one_line_and_no_worker_traceback(reference, tmp_path):
    world, expected = reference
    rng = random.Random(14)
    interrupted = 0
    for trial in range(TRIALS):
        cache, out = tmp_path / f"cache{trial}", tmp_path / f"out{trial}"
        process = start_cold_cook(world, cache, out)
        workers = wait_for_workers(process)
        time.sleep(rng.uniform(0.0, 0.3))
        if process.poll() is None:
            if trial % 2 == 0:
                os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
            else:
                process.send_signal(signal.SIGINT)  # `kill -INT <cook>`: the parent alone
            interrupted += 1
        try:
            _, err = process.communicate(timeout=60)  # a deadlocked shutdown fails here
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the test fails, and leaves no cook behind
            raise
        if process.returncode != 0:
            assert process.returncode == 130, err
            assert err == "pipeline: interrupted\n", err
        assert not [w for w in workers if alive(w)], "workers outlived the interrupted cook"
        check_readable(out)
        again = cook(world, cache, out)
        assert again.errors == [] and outputs(out) == expected
    assert interrupted >= 1


@pytest.mark.slow
@linux_only
def test_kill_9_of_a_cook_takes_its_compile_workers_along(reference, tmp_path):
    world, expected = reference
    killed = 0
    for trial in range(TRIALS):
        cache, out = tmp_path / f"cache{trial}", tmp_path / f"out{trial}"
        process = start_cold_cook(world, cache, out)
        workers = wait_for_workers(process)
        if not workers:
            process.communicate(timeout=60)
            continue
        time.sleep(0.05 * trial)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)  # returns only once nothing holds the pipes: workers gone too
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if alive(w)], "compile workers survived a kill -9 of their cook"
        killed += 1
        check_readable(out)
        assert cook(world, cache, out).errors == [] and outputs(out) == expected
    assert killed >= 1


# ---------------------------------------------------------------- one chunk, overwritten
def two_worlds(base: Path) -> tuple[Path, Path]:
    """Two worlds whose chunk forest/c00 differs (other keys, other blobs)."""
    a = copy_world(base / "a")
    b = copy_world(base / "b")
    for f in (b / "forest" / "c00").iterdir():
        f.unlink()
    for f in (a / "forest" / "c01").iterdir():
        shutil.copy(f, b / "forest" / "c00" / f.name)
    return a, b


WRITER = """
import sys
from pipeline import api
worlds, cache, out, rounds = sys.argv[1:3], sys.argv[3], sys.argv[4], int(sys.argv[5])
for i in range(rounds):
    api.cook(worlds[i % 2], chunk="forest/c00", cache=cache, out=out, jobs=1)
"""


@pytest.mark.slow
def test_readers_racing_a_writer_never_see_a_manifest_naming_blobs_its_pak_lacks(tmp_path):
    a, b = two_worlds(tmp_path)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for world in (a, b):  # warm: the writer only rewrites outputs, as fast as it can
        cook(world, cache, out, chunk="forest/c00")
    manifest = out / "forest" / "c00.json"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(a), str(b), str(cache), str(out),
                               str(20 * TRIALS)], stderr=subprocess.PIPE, text=True)
    checks, moved_on, rng = 0, 0, random.Random(7)
    while writer.poll() is None:
        before = manifest.read_bytes()
        doc = json.loads(before)
        stages = {h for k in doc["keys"].values() for h in k["stages"].values()}
        time.sleep(rng.uniform(0, 0.01))  # a reader busy between the two files: the window a writer hits
        try:
            pak = PakReader(manifest.with_name(doc["pak"]))
        except PakError:
            assert manifest.read_bytes() != before, "the manifest on disk names a pak that does not exist"
            moved_on += 1  # the writer replaced the manifest, then removed the pak this reader was late for
            continue
        assert stages <= set(pak.hashes()), "a manifest named blobs its pak lacks"
        checks += 1
    assert writer.returncode == 0, writer.stderr.read()
    assert checks > 10


@pytest.mark.slow
def test_kill_9_while_overwriting_a_chunk_leaves_a_consistent_pair(tmp_path):
    a, b = two_worlds(tmp_path)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for world in (a, b):
        cook(world, cache, out, chunk="forest/c00")
    rng = random.Random(31)
    for trial in range(TRIALS * 3):
        world = (a, b)[trial % 2]
        process = subprocess.Popen(cli("cook", world, "--chunk", "forest/c00", "--cache", cache, "--out", out,
                                       "--jobs", "1", "-q"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.2, 0.8))
        process.kill()
        process.communicate(timeout=60)
        check_readable(out)  # every manifest's pak exists and holds every blob it names
    assert cook(b, cache, out, chunk="forest/c00").errors == []
    check_readable(out)
    paks = sorted(p.name for p in (out / "forest").glob("c00.*.pak"))
    assert paks == [json.loads((out / "forest" / "c00.json").read_bytes())["pak"]]


@pytest.mark.slow
def test_a_reader_thread_sees_only_whole_pairs_while_cooks_run_in_process(tmp_path, monkeypatch):
    """The same race inside one process (threads), with the writer pausing after each pak it
    publishes: the moment a pak-then-manifest writer would show a new pak under an old manifest."""
    real_replace = atomic._replace

    def slow_after_pak(src, dst):
        real_replace(src, dst)
        if str(dst).endswith(".pak"):
            time.sleep(0.02)

    monkeypatch.setattr(atomic, "_replace", slow_after_pak)
    a, b = two_worlds(tmp_path)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for world in (a, b):
        cook(world, cache, out, chunk="forest/c00")
    stop, failures, rng = threading.Event(), [], random.Random(8)

    def read() -> None:
        manifest = out / "forest" / "c00.json"
        while not stop.is_set():
            before = manifest.read_bytes()
            doc = json.loads(before)
            time.sleep(rng.uniform(0, 0.005))
            try:
                hashes = set(PakReader(manifest.with_name(doc["pak"])).hashes())
            except PakError:
                if manifest.read_bytes() == before:
                    failures.append("missing pak")
                continue
            if not {h for k in doc["keys"].values() for h in k["stages"].values()} <= hashes:
                failures.append("pak lacks blobs")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(10 * TRIALS):
            cook((a, b)[i % 2], cache, out, chunk="forest/c00")
    finally:
        stop.set()
        reader.join()
    assert failures == []
