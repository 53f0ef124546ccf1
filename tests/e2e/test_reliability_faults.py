"""Faults: a cook killed at any moment, a corrupted cache, a shader that does not compile.

Each fault is followed by a normal cook whose outputs must be byte-identical to a
clean reference cook of the same world.
"""

from __future__ import annotations

import json
import pickle
import random
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
from robust_helpers import ROOT, check_readable, cli, cook, copy_world, outputs, run_cli

from pipeline.cache.job_records import JOB
from pipeline.outputs import manifest as mf
from pipeline.cache.store import FORMAT_VERSION, Store

KILL_TRIALS = 20
PHASES = ("scanning", "compiling", "writing outputs")  # progress lines a cook prints on stderr


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    """The sample world, a warm cache of it, and the outputs of a clean cook."""
    base = tmp_path_factory.mktemp("reference")
    world = copy_world(base / "world")
    result = cook(world, base / "cache", base / "out")
    assert result.errors == []
    return world, base / "cache", outputs(base / "out")


# ---------------------------------------------------------------- kill -9
class KilledCook:
    """A real ``pipeline cook`` process, killed with SIGKILL once it reaches a phase (plus a delay)."""

    def __init__(self, world: Path, cache: Path, out: Path):
        self.process = subprocess.Popen(cli("cook", world, "--cache", cache, "--out", out, "--jobs", "1"),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.seen: dict[str, threading.Event] = {p: threading.Event() for p in PHASES}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            for phase, event in self.seen.items():
                if line.startswith(phase):
                    event.set()
        for event in self.seen.values():
            event.set()  # the process ended: stop waiting

    def kill_after(self, phase: str, delay: float) -> bool:
        """Kill at ``delay`` seconds after ``phase`` shows; False when the cook finished first."""
        self.seen[phase].wait(timeout=60)
        time.sleep(delay)
        finished = self.process.poll() is not None
        if not finished:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)
        self.reader.join(timeout=10)
        return not finished


@pytest.mark.slow
def test_kill_9_at_random_moments_never_leaves_partial_outputs(reference, tmp_path):
    world, warm_cache, expected = reference
    rng = random.Random(20240607)
    killed = 0
    for trial in range(KILL_TRIALS):
        fresh = trial % 5 == 0  # compiles in flight when killed
        cache = tmp_path / f"cache{trial}" if fresh else tmp_path / "shared-cache"
        if not fresh and not cache.exists():
            shutil.copytree(warm_cache, cache)
        out = tmp_path / f"out{trial}"
        if trial % 4 == 1:  # an out folder already holding a complete, older cook
            shutil.copytree(tmp_path / f"out{trial - 1}", out)
        if fresh:  # a cold cook scans, compiles and writes
            phase, delay = rng.choice([("scanning", rng.uniform(0.0, 0.2)), ("compiling", rng.uniform(0.0, 1.5))])
        else:  # a warm cache skips scanning and compiling: only writing the outputs is left to kill
            phase, delay = "writing outputs", rng.uniform(0.0, 0.05)
        killed += KilledCook(world, cache, out).kill_after(phase, delay)
        check_readable(out)
        result = cook(world, cache, out)
        assert result.errors == [], f"trial {trial} ({phase} + {delay:.2f}s)"
        check_readable(out)
        assert outputs(out) == expected, f"trial {trial} ({phase} + {delay:.2f}s)"
        assert not [p for p in out.rglob(".*") if p.is_file()], "stale temps are cleaned up"
    assert killed >= KILL_TRIALS // 2


# ---------------------------------------------------------------- corrupted cache
def blob_rows(cache: Path) -> list[tuple[int, str, str | None]]:
    """(rowid, digest, file name or None when stored inline) of every blob entry."""
    with sqlite3.connect(cache / "cache.db") as db:
        rows = db.execute("SELECT rowid, key, filename FROM Cache").fetchall()
    out = []
    for rowid, key, filename in rows:
        if isinstance(key, str) and key.startswith("blob:"):
            out.append((rowid, key[len("blob:"):], filename))
    return out


def flip_file_blob(cache: Path) -> None:
    _, _, filename = next(r for r in blob_rows(cache) if r[2])
    path = cache / filename
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def truncate_file_blob(cache: Path) -> None:
    _, _, filename = next(r for r in blob_rows(cache) if r[2])
    path = cache / filename
    path.write_bytes(path.read_bytes()[:100])


def flip_inline_blob(cache: Path) -> None:
    rowid, _, _ = next(r for r in blob_rows(cache) if r[2] is None)
    with sqlite3.connect(cache / "cache.db") as db:
        (value,) = db.execute("SELECT value FROM Cache WHERE rowid = ?", (rowid,)).fetchone()
        value = bytearray(value)
        value[len(value) // 2] ^= 0xFF
        db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (bytes(value), rowid))


def delete_blob_file(cache: Path) -> None:
    _, _, filename = next(r for r in blob_rows(cache) if r[2])
    (cache / filename).unlink()


def drop_blob_entry(cache: Path) -> None:
    """A job record pointing to a blob the cache no longer has."""
    with Store(cache) as store:
        _, digest, _ = blob_rows(cache)[0]
        store._cache.delete(f"blob:{digest}")


def older_format(cache: Path) -> None:
    with Store(cache) as store:
        store._cache.set("meta:format", FORMAT_VERSION - 1)


def garbage_job_values(cache: Path) -> None:
    """Job records replaced by bytes that are not JSON."""
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("UPDATE Cache SET value = ? WHERE key LIKE 'job:%'", (b"\x80\x05garbage\x00",))


class Exploit:
    """A pickle that would create a file when loaded."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def planted_pickles(cache: Path) -> None:
    """Every job record replaced by a crafted pickle (mode 4), as an attacker with write access would."""
    payload = pickle.dumps(Exploit(cache.parent / "exploited"))
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("UPDATE Cache SET value = ?, mode = 4, filename = NULL WHERE key LIKE 'job:%'", (payload,))


def wrong_shape_records(cache: Path) -> None:
    """Readable JSON of the wrong shape: job records and scan records."""
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("UPDATE Cache SET value = ? WHERE key LIKE 'job:%'", (b'{"v":1,"data":{"blob":42,"diagnostics":"nope"}}',))
        db.execute("UPDATE Cache SET value = ? WHERE key LIKE 'scan:%'",
                   (b'{"v":1,"data":{"files":{"x":1},"facts":null,"signatures":3}}',))


def garbage_database(cache: Path) -> None:
    (cache / "cache.db").write_bytes(b"this is not an SQLite database" * 100)


CORRUPTIONS = [flip_file_blob, truncate_file_blob, flip_inline_blob, delete_blob_file, drop_blob_entry,
               older_format, garbage_job_values, planted_pickles, wrong_shape_records, garbage_database]
WARNS = {delete_blob_file: False, drop_blob_entry: False, wrong_shape_records: False}


@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=[c.__name__ for c in CORRUPTIONS])
def test_corrupted_cache_is_detected_warned_recompiled_and_outputs_stay_identical(reference, tmp_path, corrupt):
    world, warm_cache, expected = reference
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache)
    corrupt(cache)
    with pytest.warns() if WARNS.get(corrupt, True) else _no_check():
        result = cook(world, cache, tmp_path / "out")
    assert result.errors == []
    assert result.run.compiled, "the damaged entries were recompiled"
    if WARNS.get(corrupt, True):
        assert result.warnings, "the damage was reported"
    assert outputs(tmp_path / "out") == expected
    again = cook(world, cache, tmp_path / "out2")
    assert again.run.compiled == [] and again.warnings == [] and outputs(tmp_path / "out2") == expected
    assert not (tmp_path / "exploited").exists(), "no stored pickle is ever loaded"


def test_a_cache_of_a_newer_format_is_left_alone(reference, tmp_path):
    world, warm_cache, expected = reference
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache)
    with Store(cache) as store:
        store._cache.set("meta:format", FORMAT_VERSION + 1)
    before = cache_contents(cache)
    with pytest.warns(match="newer than this tool"):
        result = cook(world, cache, tmp_path / "out")
    assert result.errors == [] and result.run.compiled and outputs(tmp_path / "out") == expected
    assert cache_contents(cache) == before, "a newer tool's cache is neither cleared nor written to"


def cache_contents(cache: Path) -> tuple:
    """Every database row and every value file of a cache (SQLite's own -wal/-shm files aside)."""
    with sqlite3.connect(cache / "cache.db") as db:
        rows = db.execute("SELECT key, raw, value, mode, filename FROM Cache ORDER BY key").fetchall()
    files = {p.relative_to(cache): p.read_bytes() for p in cache.rglob("*")
             if p.is_file() and not p.name.startswith("cache.db")}
    return rows, files


class _no_check:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ---------------------------------------------------------------- a shader that does not compile
BROKEN_LINE = "this is not GLSL;"


def break_include(materials: Path, relative: str, after: str) -> int:
    """Insert a syntax error after the first line containing ``after``; returns its 1-based line."""
    path = materials / relative
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if after in line) + 1
    lines.insert(at, BROKEN_LINE)
    path.write_text("\n".join(lines) + "\n")
    return at + 1


@pytest.mark.slow
def test_a_broken_fragment_include_fails_only_its_jobs_and_is_never_cached_as_success(reference, tmp_path):
    world, _, _ = reference
    materials = tmp_path / "materials"
    shutil.copytree(ROOT / "materials", materials)
    line = break_include(materials, "pbr/brdf.glsl", "#include")
    cache, out = tmp_path / "cache", tmp_path / "out"
    proc = run_cli("cook", world, "--cache", cache, "--out", out, "--jobs", "1", "--materials", materials, "--json")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    failed = doc["errors"]
    assert failed and all(e["file"].endswith("pbr/brdf.glsl") and e["line"] == line for e in failed), failed
    assert doc["compiled"] == doc["jobs"] - doc["cache_hits"]
    with Store(cache) as store:
        records = {key[len("job:"):]: store.get(JOB, key[len("job:"):])
                   for key in store._cache.iterkeys() if key.startswith("job:")}
    bad = {k: r for k, r in records.items() if r["diagnostics"] and any(d["severity"] == "error" for d in r["diagnostics"])}
    good = {k: r for k, r in records.items() if k not in bad}
    assert set(bad) == {job for e in failed for job in e["jobs"]}  # one error per mistake, naming its jobs
    assert all(r["blob"] is None for r in bad.values()), "a failed compile is never cached as a success"
    assert good and all(r["blob"] for r in good.values())
    manifest = mf.load_chunk_manifest(out / "forest" / "c00.json")
    stages = [entry.stages for entry in manifest.keys.values()]
    assert all("vertex" in s for s in stages), "every vertex job still compiled"
    assert any(set(s) == {"vertex", "fragment"} for s in stages), "passes without brdf.glsl still compiled"
    summary = run_cli("cook", world, "--cache", cache, "--out", out, "--jobs", "1", "--materials", materials)
    assert summary.returncode == 1 and f"{len(failed)} errors" in summary.stdout + summary.stderr
