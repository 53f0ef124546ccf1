"""Scan throughput against json.load and pygltflib on the same glTF files, in one run.

    python bench/bench_scan.py [--quick] [--runs N] [--corpus DIR] [--world-files N]

Table 1: every .gltf/.glb of the corpus (default corpus/), megabytes of
glTF JSON per second (a GLB counts its JSON chunk only) for

- ``json.loads``: read each file, take its JSON, parse it (the baseline);
- ``scan (cold)``: ``pipeline.scan.scanner.scan`` of the corpus as a world, no cache
  (discovery, reading, validation, facts for every draw), on one process pool worker
  per core (``jobs`` default) and in-process (``jobs=1``);
- ``scan (cached)``: the same scan again through a warm scan cache;
- ``pygltflib``: ``GLTF2.load`` of each file (single run: it is slow).

Table 2: a generated world of N small files in chunks of 100 (copies of a few
corpus files): cold scan, then a no-op rescan through the cache (one stat per
file, one cache read per chunk).  Times are the median of the runs.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import statistics
import struct
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.cache.store import Store  # noqa: E402
from pipeline.scan import scanner  # noqa: E402
from pipeline.world import open_world  # noqa: E402

SEEDS = ("BoxVertexColors/glTF-Binary", "RiggedSimple/glTF", "MultiUVTest/glTF", "SimpleInstancing/glTF",
         "TextureTransformTest/glTF", "AnimatedMorphCube/glTF")


def json_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:4] == b"glTF":
        length = struct.unpack_from("<I", data, 12)[0]
        return data[20:20 + length]
    return data


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def corpus_table(corpus: Path, runs: int, quick: bool) -> list[tuple[str, float, float]]:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".gltf", ".glb"))
    megabytes = sum(len(json_bytes(p)) for p in files) / 1e6
    rows = [("json.loads", timed(lambda: [json.loads(json_bytes(p)) for p in files], runs))]
    rows.append(("scan (cold, no cache)", timed(lambda: scanner.scan(open_world(corpus)), runs)))
    if "jobs" in inspect.signature(scanner.scan).parameters:
        rows.append(("scan (cold, no cache, jobs=1)", timed(lambda: scanner.scan(open_world(corpus), jobs=1), runs)))
    with tempfile.TemporaryDirectory() as cache, Store(cache) as store:
        scanner.scan(open_world(corpus), store=store)
        rows.append(("scan (cached)", timed(lambda: scanner.scan(open_world(corpus), store=store), runs)))
    rows.append(("pygltflib GLTF2.load", timed(lambda: pygltflib_load(files[: 60 if quick else None]), 1)
                 * (len(files) / min(len(files), 60) if quick else 1)))
    print(f"\n{len(files)} files, {megabytes:.2f} MB of glTF JSON ({corpus})\n")
    return [(name, seconds, megabytes / seconds) for name, seconds in rows]


def pygltflib_load(files: list[Path]) -> None:
    from pygltflib import GLTF2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            try:
                GLTF2.load(str(path))
            except Exception:  # pygltflib rejects some valid files; time what it does
                pass


def print_table(rows: list[tuple[str, float, float]]) -> None:
    base = rows[0][2]
    print("| method | time (s) | MB/s | vs json.loads |")
    print("|---|---:|---:|---:|")
    for name, seconds, rate in rows:
        print(f"| {name} | {seconds:.3f} | {rate:.1f} | {rate / base:.2f}x |")


def world_table(corpus: Path, count: int, runs: int) -> None:
    seeds = [next((corpus / "glTF-Sample-Assets" / "Models" / s).glob("*.gl*")) for s in SEEDS]
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "world"
        for i in range(count):
            seed = seeds[i % len(seeds)]
            target = world / f"level{i % 4}" / f"c{i // 100:03d}" / f"f{i:05d}{seed.suffix}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(seed, target)
        one_s = None
        if "jobs" in inspect.signature(scanner.scan).parameters:
            one_s = timed(lambda: scanner.scan(open_world(world), jobs=1), 1)
        with Store(Path(tmp) / "cache") as store:
            start = time.perf_counter()
            cold = scanner.scan(open_world(world), store=store)
            cold_s = time.perf_counter() - start
            warm_s = timed(lambda: scanner.scan(open_world(world), store=store), runs)
            warm = scanner.scan(open_world(world), store=store)
    print(f"\ngenerated world: {count} files, {len(cold.chunks)} chunks, {len(cold.draws)} draws\n")
    print("| scan | time (s) | files read |")
    print("|---|---:|---:|")
    print(f"| cold, empty cache | {cold_s:.3f} | {cold.files_read} |")
    if one_s is not None:
        print(f"| cold, no cache, jobs=1 | {one_s:.3f} | {cold.files_read} |")
    print(f"| no-op rescan | {warm_s:.3f} | {warm.files_read} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer runs, a 2,000-file world, pygltflib on 60 files")
    parser.add_argument("--runs", type=int, default=None, help="runs per measurement (median)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    parser.add_argument("--world-files", type=int, default=None, help="files in the generated world")
    args = parser.parse_args()
    runs = args.runs or (2 if args.quick else 5)
    print_table(corpus_table(args.corpus, runs, args.quick))
    world_table(args.corpus, args.world_files or (2000 if args.quick else 10000), runs)


if __name__ == "__main__":
    main()
