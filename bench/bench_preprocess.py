"""Preprocessing a stage job against compiling it, on the jobs a real cook plans.

    python bench/bench_preprocess.py [--runs N] [--out bench/PREPROCESS.md] [--corpus DIR]

Exact job dedup (pipeline.plan.jobs) preprocesses every planned GLSL job in the
planning process, with glslang's C API in process, and keys it by its preprocessed
text.  This measures what that costs against what it can save: per job set, the
median over ``--runs`` of the time to preprocess every job once, and of the time to
compile every job once (compile_one with the in-process backend: preprocess, parse,
link, SPIR-V, spirv-val; for webgl2 the ES front end's second parse), one after
another in this process after a warm-up.  The ratio is preprocess / compile.

Job sets: the built-in pbr family's jobs for the corpus, and the jobs of the legacy
test family (tests/data/ubershader) for the corpus, one set per compile target.
The table is written to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import api  # noqa: E402
from pipeline.compilers import SourceTree, compile_one, get_backend  # noqa: E402
from pipeline.plan.jobs import JobOptions, plan_jobs  # noqa: E402

LEGACY = ROOT / "tests" / "data" / "ubershader"


def job_sets(corpus: Path) -> dict[str, tuple[SourceTree, list]]:
    """name -> (tree, requests) of the jobs a cook of the corpus plans (define-keyed, before merging)."""
    sets = {}
    for name, world in (("pbr", api.open_world(corpus)),
                        ("legacy", api.open_world(corpus, rules=LEGACY / "rules", materials=LEGACY / "materials"))):
        tree = SourceTree(world.materials_dir, world.allowed_roots)
        found = api.keys(world)
        plan = plan_jobs(found.required.keys, world.families, tree, JobOptions(), exact=False)
        by_target: dict[str, list] = {}
        for job in sorted(plan.jobs.values(), key=lambda j: j.key):
            by_target.setdefault(job.request.target, []).append(job.request)
        for target, requests in sorted(by_target.items()):
            sets[f"{name} ({target})"] = (tree, requests)
    return sets


def timed(fn, requests) -> float:
    start = time.perf_counter()
    for request in requests:
        fn(request)
    return time.perf_counter() - start


def measure(tree: SourceTree, requests: list, runs: int) -> tuple[float, float]:
    backend = get_backend("capi")
    preprocess = lambda r: backend.preprocess(r, tree)  # noqa: E731
    compile_ = lambda r: compile_one(r, tree, backend)  # noqa: E731
    timed(preprocess, requests[:3]), timed(compile_, requests[:3])  # warm-up
    pre = statistics.median(timed(preprocess, requests) for _ in range(runs))
    full = statistics.median(timed(compile_, requests) for _ in range(runs))
    return pre, full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "PREPROCESS.md")
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    args = parser.parse_args()
    rows = []
    for name, (tree, requests) in job_sets(args.corpus).items():
        pre, full = measure(tree, requests, args.runs)
        n = len(requests)
        rows.append(f"| {name} | {n} | {pre / n * 1000:.2f} ms | {full / n * 1000:.2f} ms | {pre / full:.3f} |")
        print(rows[-1], flush=True)
    backend = get_backend("capi")
    lines = [
        "# Preprocessing versus compiling a stage job",
        "",
        f"`python bench/bench_preprocess.py --runs {args.runs}` on "
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC: Python {platform.python_version()}, "
        f"{backend.identity}.  Median of {args.runs} runs, one job after another in one process.",
        "",
        "| job set (corpus) | jobs | preprocess / job | compile / job | ratio |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
        "Compile = preprocess + parse + link + SPIR-V + spirv-val (webgl2: + a second parse of the cleaned text).",
        "",
    ]
    args.out.write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
