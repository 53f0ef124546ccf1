"""Figure 18 of ``bench/run``: what the build server pays after an artist's edit, whole processes.

18. On the largest generated world, one file of chunk 0 edited (:func:`worldgen.edit_chunk`, its new
    jobs already in the cache, so no compile is timed):

    - the whole-world ``pipeline cook`` that follows, against a bare stat walk of the world
      (a Python process that ``os.walk`` s and ``stat`` s every file) times three plus the chunk's
      own work (``pipeline cook --chunk`` of the same edit): the other chunks should cost a stat;
    - the first no-op ``pipeline cook`` after that cook, against the same stat walk (target 3x).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from bench_speed import _env, pipeline_cmd

WALK = ("import os, sys\n"
        "n = 0\n"
        "for folder, dirs, files in os.walk(sys.argv[1]):\n"
        "    for name in files:\n"
        "        os.stat(os.path.join(folder, name)); n += 1\n"
        "print(n)\n")


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=_env(), capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:4]}... exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def figure_world_edit(run, library: dict, runs: int, workers: int, results, Figure, log) -> None:
    import worldgen

    chunk = worldgen.chunk_name(run.spec, 0)
    path = sorted((run.root / chunk).iterdir())[0]
    original = path.read_bytes()
    worldgen.edit_chunk(run.root, run.spec, 0)
    edited = path.read_bytes()
    common = ["--cache", str(run.cache), "--out", str(run.out), "-q", "-j", str(workers),
              "--rules", str(library["rules"]), "--materials", str(library["materials"])]
    world = pipeline_cmd("cook", str(run.root), *common)
    one = pipeline_cmd("cook", str(run.root), "--chunk", chunk, *common)
    walk = [sys.executable, "-c", WALK, str(run.root)]
    try:
        for content in (edited, original):  # both versions' jobs compiled and both states recorded once
            path.write_bytes(content)
            _timed(world)
        edits, noops, chunks, walks = [], [], [], []
        for _ in range(runs):
            path.write_bytes(edited)
            edits.append(_timed(world))
            noops.append(_timed(world))
            path.write_bytes(original)
            _timed(world)
            path.write_bytes(edited)
            chunks.append(_timed(one))
            path.write_bytes(original)
            _timed(one)
            walks.append(_timed(walk))
    finally:
        path.write_bytes(original)
        subprocess.run(world, env=_env(), capture_output=True)
    edit, noop, chunk_work, stat_walk = (statistics.median(x) for x in (edits, noops, chunks, walks))
    limit = 3 * stat_walk + chunk_work
    log(f"figure 18: world cook after one edit {edit:.3f} s (--chunk {chunk_work:.3f} s), first no-op {noop:.3f} s, "
        f"stat walk {stat_walk:.3f} s")
    results.figures.append(Figure(
        18, f"whole-world cook after one file changed, {run.files} files, whole process (jobs cached)", edit, "s",
        f"3 x stat walk {stat_walk:.3f} s + the chunk's own cook {chunk_work:.3f} s = {limit:.3f} s", edit / limit,
        "<= 1", edit <= limit, f"`pipeline cook --chunk {chunk}` of the same edit: {chunk_work:.3f} s"))
    results.figures.append(Figure(
        18, f"first no-op cook after that cook, {run.files} files, whole process", noop, "s",
        f"stat walk {stat_walk:.3f} s", noop / stat_walk, "<= 3x", noop <= 3 * stat_walk,
        "a Python process walking the world and stat-ing every file"))
