"""Real processes: Ctrl-C during a cook, kill -9 of a cook with compile workers, readers
racing a writer, and kills during a cook's output phase.

The outputs are one shader library (``shaders.pak``) and the chunk indexes and level
manifests beside it; at every instant the library on disk holds every blob of every
chunk index on disk, so a reader that opens the library first and the index after
never finds a blob missing unless a cook replaced the library in between.

The number of trials is small by default so CI stays fast; ``PIPELINE_TRIALS=N``
runs N of each (the release check runs 50).
"""

from __future__ import annotations

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
from robust_helpers import ROOT, check_readable, cli, cook, copy_world, opened_library, outputs

from pipeline import api
from pipeline.outputs import atomic, read_outputs
from pipeline.outputs.manifest import load_chunk_manifest, stage_hashes
from pipeline.outputs.pak import LIBRARY_NAME, read_index

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
CHUNK = "forest/c00"


def two_worlds(base: Path) -> tuple[Path, Path]:
    """Two worlds whose chunk forest/c00 differs (other keys, other blobs)."""
    a = copy_world(base / "a")
    b = copy_world(base / "b")
    for f in (b / "forest" / "c00").iterdir():
        f.unlink()
    for f in (a / "forest" / "c01").iterdir():
        shutil.copy(f, b / "forest" / "c00" / f.name)
    return a, b


def two_shader_libraries(base: Path) -> tuple[Path, Path]:
    """The built-in shaders and a copy with one constant changed: every pbr blob differs."""
    first, second = base / "materials-1", base / "materials-2"
    shutil.copytree(ROOT / "materials", first)
    shutil.copytree(ROOT / "materials", second)
    common = second / "pbr" / "common.glsl"
    common.write_text(common.read_text().replace("3.14159265358979", "3.0"))
    return first, second


def cook_with(world: Path, materials: Path, cache: Path, out: Path, **options) -> api.CookResult:
    return api.cook(api.open_world(world, materials=materials), cache=cache, out=out, jobs=1, **options)


def variants(base: Path) -> list[tuple[Path, Path]]:
    """(world, shaders) pairs whose forest/c00 index names other blobs each time the next one is cooked."""
    a, b = two_worlds(base)
    m1, m2 = two_shader_libraries(base)
    return [(a, m1), (b, m1), (a, m2), (b, m2)]


def check_index_blobs_in_library(out: Path) -> None:
    """Every chunk index on disk names only blobs the library's index holds (read_index: no blob read).

    The chunk table is not checked: a cook killed between its indexes and its settle leaves the
    table of before beside the indexes it wrote (its next cook settles it)."""
    held = read_index(out / LIBRARY_NAME)
    assert held is not None, "the library is missing or unreadable"
    for path in out.rglob("*.json"):
        if not path.name.endswith(".level.json") and not atomic.is_temp_name(path.name):
            manifest = load_chunk_manifest(path)
            assert stage_hashes(manifest) <= held[0], f"{path} names blobs shaders.pak lacks"


WRITER = """
import sys
from pipeline import api
worlds, shaders, cache, out, rounds = sys.argv[1:3], sys.argv[3:5], sys.argv[5], sys.argv[6], int(sys.argv[7])
for i in range(rounds):
    world = api.open_world(worlds[i % 2], materials=shaders[i // 2 % 2])
    assert api.cook(world, chunk="forest/c00", cache=cache, out=out, jobs=1).errors == []
"""


@pytest.mark.slow
def test_readers_racing_a_writer_never_see_a_chunk_index_naming_blobs_the_library_lacks(tmp_path):
    pairs = variants(tmp_path)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for world, shaders in pairs:  # warm: the writer only rewrites outputs, as fast as it can
        assert cook_with(world, shaders, cache, out, chunk=CHUNK).errors == []
    index = out / "forest" / "c00.json"
    (a, m1), (b, _), (_, m2) = pairs[:3]
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(a), str(b), str(m1), str(m2), str(cache), str(out),
                               str(20 * TRIALS)], stderr=subprocess.PIPE, text=True)
    checks, seen, rng = 0, set(), random.Random(7)
    while writer.poll() is None:
        manifest, library = read_outputs.load_chunk(out, CHUNK)  # the reader's protocol: raises if it fails
        assert stage_hashes(manifest) <= set(library.hashes())
        assert set(manifest.reflection) == {d for d in stage_hashes(manifest) if library.reflection(d) is not None}
        seen.add(stage_hashes(manifest))
        with opened_library(out) as (library, in_place):  # the same by hand, a reader busy between the files
            time.sleep(rng.uniform(0, 0.01))
            missing = stage_hashes(load_chunk_manifest(index)) - set(library.hashes())
            # a miss only when a cook replaced the library (and the index) after this reader opened it
            assert not missing or not in_place(), "the chunk index names blobs the library lacks"
        checks += 1
    assert writer.returncode == 0, writer.stderr.read()
    assert checks > 10 and len(seen) > 1, "the readers never saw the writer change the outputs"
    check_index_blobs_in_library(out)


KILLER = """
import os, signal, sys
from pipeline import api
from pipeline.outputs import atomic
world, shaders, cache, out, at, after = sys.argv[1:5] + [int(sys.argv[5]), sys.argv[6] == "after"]
real, renames = atomic._replace, []

def replace(src, dst):
    renames.append(str(dst))
    if len(renames) == at and not after:
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
    if len(renames) == at and after:
        os.kill(os.getpid(), signal.SIGKILL)

atomic._replace = replace
assert api.cook(api.open_world(world, materials=shaders), cache=cache, out=out, jobs=1).errors == []
print(len(renames))
"""


def kill_at(world: Path, shaders: Path, cache: Path, out: Path, at: int, when: str) -> subprocess.CompletedProcess:
    """A whole-world cook killed with SIGKILL right before or after its ``at``-th file rename."""
    return subprocess.run([sys.executable, "-c", KILLER, str(world), str(shaders), str(cache), str(out), str(at),
                           when], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_kill_9_at_random_points_of_the_output_phase_leaves_every_index_s_blobs_in_the_library(tmp_path):
    (world, m1), _, (_, m2) = variants(tmp_path)[:3]
    cache, before, clean = tmp_path / "cache", tmp_path / "before", tmp_path / "clean"
    assert cook_with(world, m1, cache, before).errors == []  # the outputs each trial starts from
    assert cook_with(world, m2, cache, clean).errors == []   # a clean cook of the edited shaders
    expected = outputs(clean)
    probe = tmp_path / "probe"
    shutil.copytree(before, probe)
    counted = kill_at(world, m2, cache, probe, 10**9, "before")  # never killed: how many renames there are
    assert counted.returncode == 0, counted.stderr
    renames = int(counted.stdout)
    assert renames >= 3 and outputs(probe) == expected  # the library grown, the indexes, the levels, settled
    rng = random.Random(23)
    points = sorted({(rng.randint(1, renames), rng.choice(["before", "after"])) for _ in range(4 * TRIALS)})
    for trial, (at, when) in enumerate(points):
        out = tmp_path / f"out{trial}"
        shutil.copytree(before, out)
        killed = kill_at(world, m2, cache, out, at, when)
        assert killed.returncode == -signal.SIGKILL, (at, when, killed.stderr)
        check_index_blobs_in_library(out)
        check_readable(out)
        again = cook_with(world, m2, cache, out)
        assert again.errors == [], (at, when)
        assert outputs(out) == expected, (at, when)


@pytest.mark.slow
def test_kill_9_while_overwriting_a_chunk_leaves_its_index_and_the_library_consistent(tmp_path):
    pairs = variants(tmp_path)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for world, shaders in pairs:
        assert cook_with(world, shaders, cache, out, chunk=CHUNK).errors == []
    rng = random.Random(31)
    for trial in range(TRIALS * 3):
        world, shaders = pairs[trial % len(pairs)]
        process = subprocess.Popen(cli("cook", world, "--materials", shaders, "--chunk", CHUNK, "--cache", cache,
                                       "--out", out, "--jobs", "1", "-q"),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.2, 0.8))
        process.kill()
        process.communicate(timeout=60)
        check_index_blobs_in_library(out)
        check_readable(out)
    world, shaders = pairs[-1]
    assert cook_with(world, shaders, cache, out, chunk=CHUNK).errors == []
    check_readable(out)
    assert [p.name for p in out.glob("*.pak")] == [LIBRARY_NAME] and not list(out.rglob("c00*.pak"))
    clean = tmp_path / "clean"
    assert cook_with(world, shaders, cache, clean, chunk=CHUNK).errors == []
    assert (out / "forest" / "c00.json").read_bytes() == (clean / "forest" / "c00.json").read_bytes()
    assert read_index(out / LIBRARY_NAME)[1][CHUNK] == read_index(clean / LIBRARY_NAME)[1][CHUNK]


@pytest.mark.slow
def test_a_reader_thread_sees_only_whole_pairs_while_cooks_run_in_process(tmp_path, monkeypatch):
    """The same race inside one process (threads), with the writer pausing after each file it
    publishes: the moments a library grown but not yet settled sits beside old and new indexes."""
    real_replace = atomic._replace

    def slow_after_rename(src, dst):
        real_replace(src, dst)
        time.sleep(0.02)

    monkeypatch.setattr(atomic, "_replace", slow_after_rename)
    pairs = variants(tmp_path)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for world, shaders in pairs:
        assert cook_with(world, shaders, cache, out, chunk=CHUNK).errors == []
    stop, failures, rng = threading.Event(), [], random.Random(8)
    reads = []

    def read() -> None:
        index = out / "forest" / "c00.json"
        while not stop.is_set():
            with opened_library(out) as (library, in_place):
                time.sleep(rng.uniform(0, 0.005))
                names = stage_hashes(load_chunk_manifest(index))
                if not names <= set(library.hashes()) and in_place():
                    failures.append("the library lacks blobs of the index")
            try:
                manifest, held = read_outputs.load_chunk(out, CHUNK)
            except Exception as exc:  # noqa: BLE001 - any failure of the reader is the finding
                failures.append(repr(exc))
                continue
            if not stage_hashes(manifest) <= set(held.hashes()):
                failures.append("load_chunk returned an index with blobs its library lacks")
            reads.append(stage_hashes(manifest))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(10 * TRIALS):
            world, shaders = pairs[i % len(pairs)]
            cook_with(world, shaders, cache, out, chunk=CHUNK)
    finally:
        stop.set()
        reader.join()
    assert failures == []
    assert len(set(reads)) > 1, "the reader never saw the cooks change the outputs"
