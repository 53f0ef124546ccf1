"""Reflecting new blobs one after another against in parallel, as a cold cook's outputs do.

    python bench/bench_reflection.py [--runs N] [--out bench/REFLECTION.md] [--world DIR]

A cook's runtime contract reflects every new Vulkan blob with SPIRV-Cross (one
``spirv-cross --reflect`` process per blob).  This cooks ``--world`` (the sample world
by default) once into a temporary cache, takes its Vulkan blobs, and measures side by
side in one run, median over ``--runs``: reflecting them serially (what the outputs
did per chunk), and :func:`pipeline.outputs.reflection.prefetch` with one worker per
usable CPU (what a cook does now before writing outputs).  The table goes to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import api  # noqa: E402
from pipeline.cache.store import Store  # noqa: E402
from pipeline.outputs import reflection  # noqa: E402
from pipeline.cpus import usable_cpus  # noqa: E402


def vulkan_blobs(world: Path, folder: Path) -> dict[str, bytes]:
    result = api.cook(world, cache=folder / "cache", out=folder / "out")
    with Store(folder / "cache") as store:
        return {r.blob: store.get_blob(r.blob) for key, r in sorted(result.run.results.items())
                if r.blob and result.plan.jobs[key].request.target.startswith("vulkan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "REFLECTION.md")
    parser.add_argument("--world", type=Path, default=ROOT / "examples" / "sample_world")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        blobs = vulkan_blobs(args.world, Path(tmp))
    workers = usable_cpus()
    serial, parallel = [], []
    for _ in range(args.runs):
        started = time.perf_counter()
        for blob in blobs.values():
            reflection.reflect(blob)
        serial.append(time.perf_counter() - started)
        store = Store.in_memory()
        started = time.perf_counter()
        done = reflection.prefetch(store, list(blobs), blobs.get, workers)
        parallel.append(time.perf_counter() - started)
        assert done == len(blobs), (done, len(blobs))
    s, p = statistics.median(serial), statistics.median(parallel)
    table = (f"# Reflection of a cook's new blobs: serial against parallel\n\n"
             f"`python bench/bench_reflection.py --runs {args.runs}`; {dt.date.today()}, {platform.python_version()}, "
             f"{usable_cpus()} usable CPUs; world `{args.world.name}`; median of {args.runs} runs.\n\n"
             f"| blobs | serial | prefetch ({workers} workers) | serial / prefetch |\n|---:|---:|---:|---:|\n"
             f"| {len(blobs)} | {s * 1000:.0f} ms | {p * 1000:.0f} ms | {s / p:.2f} |\n")
    args.out.write_text(table)
    print(table)


if __name__ == "__main__":
    main()
