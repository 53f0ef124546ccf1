"""Reflecting a cook's new blobs: SPIRV-Cross's library in process against its command, serially and in parallel.

    python bench/bench_reflection.py [--runs N] [--out bench/REFLECTION.md] [--world DIR]

A cook's runtime contract reflects every new Vulkan blob with SPIRV-Cross: in process through
its C API where the library loads (:mod:`pipeline.compilers.spirv_cross_capi`), else one
``spirv-cross --reflect`` process per blob.  This cooks ``--world`` (the sample world by
default) once into a temporary cache, takes its Vulkan blobs, and measures side by side in
one run, median over ``--runs``, for each of the two ways: reflecting the blobs serially, and
:func:`pipeline.outputs.reflection.prefetch` with one thread per usable CPU (what a cook does
before writing outputs); wall time and CPU time (this process and its children).  The table
goes to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import api  # noqa: E402
from pipeline.cache.store import Store  # noqa: E402
from pipeline.compilers import spirv_cross_capi  # noqa: E402
from pipeline.compilers.reflect import reflect  # noqa: E402
from pipeline.outputs import reflection  # noqa: E402
from pipeline.cpus import usable_cpus  # noqa: E402


def vulkan_blobs(world: Path, folder: Path) -> dict[str, bytes]:
    result = api.cook(world, cache=folder / "cache", out=folder / "out")
    with Store(folder / "cache") as store:
        return {r.blob: store.get_blob(r.blob) for key, r in sorted(result.run.results.items())
                if r.blob and result.plan.jobs[key].request.target.startswith("vulkan")}


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work) -> tuple[float, float]:
    """(wall, CPU) seconds of ``work()``."""
    wall, used = time.perf_counter(), cpu()
    work()
    return time.perf_counter() - wall, cpu() - used


def measure(blobs: dict[str, bytes], workers: int) -> dict[str, tuple[float, float]]:
    """(wall, CPU) of reflecting ``blobs`` serially and by prefetch, one run."""
    def prefetch() -> None:
        done = reflection.prefetch(Store.in_memory(), list(blobs), blobs.get, workers)
        assert done == len(blobs), (done, len(blobs))

    return {"serial": timed(lambda: [reflect(blob) for blob in blobs.values()]), "prefetch": timed(prefetch)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "REFLECTION.md")
    parser.add_argument("--world", type=Path, default=ROOT / "examples" / "sample_world")
    args = parser.parse_args()
    load = spirv_cross_capi.load
    if load() is None:
        sys.exit("bench_reflection: SPIRV-Cross's library (Debian libspirv-cross-c-shared0) is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        blobs = vulkan_blobs(args.world, Path(tmp))
    workers = usable_cpus()
    runs: dict[str, list] = {"library": [], "command": []}
    for _ in range(args.runs):  # the two ways interleaved, so a slower moment of the machine falls on both
        runs["library"].append(measure(blobs, workers))
        spirv_cross_capi.load = lambda: None  # what a machine without the library does
        try:
            runs["command"].append(measure(blobs, workers))
        finally:
            spirv_cross_capi.load = load

    def median(way: str, how: str, which: int) -> float:
        return statistics.median(run[how][which] for run in runs[way])

    rows = []
    for how in ("serial", "prefetch"):
        for way in ("command", "library"):
            rows.append(f"| {way} | {how} | {median(way, how, 0) * 1000:.0f} ms | {median(way, how, 1) * 1000:.0f} ms "
                        f"| {median(way, how, 1) * 1000 / len(blobs):.2f} ms |")
    ratio = median("command", "prefetch", 1) / median("library", "prefetch", 1)
    table = (f"# Reflection of a cook's new blobs: SPIRV-Cross's library against its command\n\n"
             f"`python bench/bench_reflection.py --runs {args.runs}`; {dt.date.today()}, {platform.python_version()}, "
             f"{workers} usable CPUs; world `{args.world.name}`, {len(blobs)} Vulkan blobs; median of {args.runs} "
             f"runs; CPU is this process's and its children's; prefetch runs {workers} threads.\n\n"
             f"| SPIRV-Cross | how | wall | CPU | CPU per blob |\n|---|---|---:|---:|---:|\n" + "\n".join(rows) +
             f"\n\nPrefetch CPU, command / library: {ratio:.1f}x.\n")
    args.out.write_text(table)
    print(table)


if __name__ == "__main__":
    main()
