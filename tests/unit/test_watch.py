"""``pipeline watch`` as a user runs it: a subprocess on a copy of the sample world, real file events."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline.watch import Recook
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
WAIT = 300  # seconds a line may take on a loaded machine before the test gives up (not a speed check)


def test_status_line() -> None:
    assert Recook("forest/c03", ["forest/c03/rocks.gltf"], 2, 3, 0.214).line() == \
        "forest/c03: rocks.gltf changed -> 2 new keys, 3 jobs compiled, 0.21 s"
    assert Recook("forest/c03", ["a.gltf", "b.gltf"], 0, 0, 0.1, ["x: error: y"]).line() == \
        "forest/c03: 2 files changed -> 0 new keys, 0 jobs compiled, 1 errors, 0.10 s"


class _Lines:
    """The lines of a stream, read on a thread."""

    def __init__(self, stream) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in stream], daemon=True).start()

    def until(self, predicate) -> str:
        while True:
            line = self.lines.get(timeout=WAIT)
            if predicate(line):
                return line


@pytest.mark.slow
def test_watch_recooks_the_changed_chunk_and_goes_on_after_bad_input(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    out, cache = tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "watch", str(world), "--out", str(out),
                             "--cache", str(cache)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=tmp_path)
    try:
        stdout, stderr = _Lines(proc.stdout), _Lines(proc.stderr)
        first = stdout.until(lambda line: "jobs compiled" in line)
        assert first.startswith("world: cooked -> ")
        stderr.until(lambda line: line.startswith("watching "))
        manifest = out / "forest" / "c00.json"
        before = manifest.read_bytes()

        target = world / "forest" / "c00" / "terrain.gltf"
        doc = json.loads(target.read_text())
        for material in doc["materials"]:
            material["alphaMode"], material["doubleSided"] = "BLEND", not material.get("doubleSided", False)
        target.write_text(json.dumps(doc))
        line = stdout.until(lambda line: line.startswith("forest/c00: terrain.gltf changed -> "))
        assert "new keys" in line and " 0 new keys" not in line
        assert manifest.read_bytes() != before
        assert "BLEND" in manifest.read_text()

        bad = world / "forest" / "c01" / "banner.glb"
        bad.write_bytes(b"{")
        line = stdout.until(lambda line: line.startswith("forest/c01: banner.glb changed -> "))
        assert "1 errors" in line
        stderr.until(lambda line: line.startswith("world/forest/c01/banner.glb: error: "))  # as cook names it from here

        target.write_text(json.dumps({**doc, "materials": []}))  # the loop went on after the error
        stdout.until(lambda line: line.startswith("forest/c00: terrain.gltf changed -> "))
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=WAIT)
    assert code == 0


def test_a_recook_times_the_save_to_the_chunk_s_outputs_on_disk_not_the_level_manifest(tmp_path: Path,
                                                                                        monkeypatch) -> None:
    from pipeline.cook import run
    from pipeline.watch import Watcher

    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    watcher = Watcher(world, out=tmp_path / "out", cache=tmp_path / "cache", jobs=1)
    watcher.recook(None, [])
    real = run.update_level
    seen = {}

    def slow_level(*args, **kwargs):
        seen["index on disk"] = (tmp_path / "out" / "town" / "market.json").exists()
        time.sleep(0.3)  # a level manifest that takes its time: not in the chunk's wait
        return real(*args, **kwargs)

    monkeypatch.setattr(run, "update_level", slow_level)
    (world / "town" / "market" / "copy.gltf").write_bytes(next((world / "town" / "market").glob("*.gltf")).read_bytes())
    recook = watcher.recook({"town/market"}, ["town/market/copy.gltf"])
    assert seen["index on disk"] and recook.errors == []
    assert recook.total - recook.seconds >= 0.3 and recook.to_json()["total"] >= recook.to_json()["seconds"]


def test_recooks_keep_the_rule_sets_loaded_and_read_an_unchanged_index_once(tmp_path: Path, monkeypatch) -> None:
    from pipeline.outputs import manifest as mf
    from pipeline.rules import load
    from pipeline.watch import Watcher

    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    watcher = Watcher(world, out=tmp_path / "out", cache=tmp_path / "cache", jobs=1)  # a cache of its own
    watcher.recook(None, [])
    loads, reads = [], []
    real_load = load.load_rulesets  # the world imports it when it first loads its rule sets
    monkeypatch.setattr(load, "load_rulesets", lambda *a, **k: loads.append(a) or real_load(*a, **k))
    real_read = mf.load_chunk_manifest
    monkeypatch.setattr(mf, "load_chunk_manifest", lambda p: reads.append(str(p)) or real_read(p))
    market = world / "town" / "market"
    source = next(market.glob("*.gltf"))
    for n in range(2):
        (market / f"copy{n}.gltf").write_bytes(source.read_bytes())
        chunks, changed = watcher.chunks_of([market / f"copy{n}.gltf"])
        recook = watcher.recook(chunks, changed)
        assert recook.errors == [] and chunks == {"town/market"}
    index = str(mf.chunk_manifest_path(tmp_path / "out", "town/market"))
    assert loads == []  # the world's rule sets stayed loaded: its cache is the one the cooks use
    assert reads.count(index) == 2  # once after each recook; before the next one it is as it was read
