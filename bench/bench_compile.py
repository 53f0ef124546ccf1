"""In-process glslang (C API) versus one glslangValidator process per job, on the same jobs.

    python bench/bench_compile.py [--quick] [--runs N] [--jobs N]

Two job sets, one table each: permutations of materials/pbr/pbr.frag (defines
built from rules/pbr.yaml by the define convention of docs/architecture.md,
forward pass; skipped if it does not compile), and of the mid-size test fixture
tests/data/glsl/mesh/mesh.frag.  The ratio shrinks as the shader grows: process
start-up is a fixed cost, compile time is not.  Each method compiles every job
once per run; the table shows the median of the runs.  spirv-val (in-process) and spirv-opt -O
are timed on the same blobs for scale.  The glslangValidator process is the
prefix's executable itself, not the Python wrapper script on PATH.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.compilers import (
    CompileRequest,
    SourceTree,
    get_backend,
    optimize,
    validate,
)
from pipeline.keys.defines import project_defines

VARIED = ("ALPHA_MODE", "NORMAL_MAP", "BASE_COLOR_MAP", "EMISSIVE_MAP", "CLEARCOAT", "OCCLUSION_MAP")


def _feature_defines(name: str, spec: dict, value) -> list[tuple[str, str]]:
    """One feature's defines under the convention (static value, spec id, or enum constants)."""
    values = spec.get("values")
    mode = spec.get("mode", "static")
    enum = [(f"{name}_{v}", str(i)) for i, v in enumerate(values)] if values and isinstance(values[0], str) else []
    if mode == "dynamic":
        return enum
    if mode == "specialization":
        return enum + [(f"{name}_SPEC_ID", str(spec.get("constant_id", 0)))]
    if enum:
        return enum + [(name, str(values.index(value)))]
    return [(name, str(int(value)) if isinstance(value, bool) else str(value))]


def _default(spec: dict):
    return spec["values"][0] if spec.get("values") else False


def pbr_jobs(count: int) -> list[CompileRequest]:
    """Forward-pass fragment permutations of the pbr family, varying a few features."""
    features = yaml.safe_load((ROOT / "rules" / "pbr.yaml").read_text())["features"]
    choices = [features[n].get("values", [False, True]) for n in VARIED if n in features]
    names = [n for n in VARIED if n in features]
    jobs = []
    for combo in itertools.islice(itertools.product(*choices), count):
        chosen = dict(zip(names, combo))
        chosen.setdefault("UV_SETS", 1)
        defines = [("PASS_FORWARD", "1")]
        for name, spec in sorted(features.items()):
            defines += _feature_defines(name, spec, chosen.get(name, _default(spec)))
        jobs.append(CompileRequest("pbr/pbr.frag", "fragment", defines=tuple(defines)))
    return jobs


def fixture_jobs(count: int) -> list[CompileRequest]:
    alpha = (("ALPHA_MODE_OPAQUE", "0"), ("ALPHA_MODE_MASK", "1"), ("ALPHA_MODE_BLEND", "2"))
    combos = itertools.product("012", "01", "01", "01", "01")
    return [CompileRequest("mesh/mesh.frag", "fragment", defines=alpha + (
        ("ALPHA_MODE", a), ("UV_SETS", "1"), ("NORMAL_MAP", n), ("BASE_COLOR_MAP", b), ("EMISSIVE_MAP", e),
        ("CLEARCOAT", c))) for a, n, b, e, c in itertools.islice(combos, count)]


def pbr_set(count: int) -> tuple[SourceTree, list[CompileRequest], str] | None:
    """The pbr jobs, or ``None`` when pbr.frag is absent or does not compile for every job."""
    if not (ROOT / "materials" / "pbr" / "pbr.frag").exists():
        return None
    tree = SourceTree(ROOT / "materials")
    try:
        jobs = project(tree, pbr_jobs(count))
        if all(get_backend("capi").compile(j, tree).ok for j in jobs):
            return tree, jobs, "materials/pbr/pbr.frag"
    except Exception as exc:  # noqa: BLE001 - the bench skips the set, and says why
        print(f"(pbr jobs unusable: {exc})", file=sys.stderr)
    print("(pbr.frag does not compile for every job; skipped)", file=sys.stderr)
    return None


def fixture_set(count: int) -> tuple[SourceTree, list[CompileRequest], str]:
    tree = SourceTree(ROOT / "tests" / "data" / "glsl")
    return tree, project(tree, fixture_jobs(count)), "tests/data/glsl/mesh/mesh.frag"


def project(tree: SourceTree, jobs: list[CompileRequest]) -> list[CompileRequest]:
    tested = tree.tested_macros(jobs[0].source)
    unique = {CompileRequest(j.source, j.stage, defines=project_defines(j.defines, tested)) for j in jobs}
    return sorted(unique, key=lambda j: j.defines)


def timed(fn, runs: int) -> float:
    """Median wall time of ``runs`` calls, in seconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def compile_all(backend_name: str, tree: SourceTree, jobs: list[CompileRequest]) -> list[bytes]:
    backend = get_backend(backend_name)
    outputs = [backend.compile(job, tree) for job in jobs]
    assert all(o.ok for o in outputs), [o.diagnostics for o in outputs if not o.ok][:1]
    return [o.spirv for o in outputs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer jobs and runs")
    parser.add_argument("--runs", type=int, help="runs per method (median reported)")
    parser.add_argument("--jobs", type=int, help="number of permutations per shader")
    parser.add_argument("--source", choices=("both", "pbr", "fixture"), default="both")
    args = parser.parse_args()
    runs = args.runs or (3 if args.quick else 5)
    count = args.jobs or (8 if args.quick else 24)

    start = time.perf_counter()
    get_backend("capi")
    print(f"glslang C API load + init, once per process: {(time.perf_counter() - start) * 1000:.1f} ms\n")
    sets = [pbr_set(count) if args.source != "fixture" else None,
            fixture_set(count) if args.source != "pbr" else None]
    for tree, jobs, source in filter(None, sets):
        bench_set(tree, jobs, source, runs)


def bench_set(tree: SourceTree, jobs: list[CompileRequest], source: str, runs: int) -> None:
    blobs = compile_all("capi", tree, jobs)  # warm-up: files parsed, glslang built-ins cached
    lines = sum(len(tree.read(f).splitlines()) for f in tree.files(jobs[0].source))
    capi = timed(lambda: compile_all("capi", tree, jobs), runs)
    cli = timed(lambda: compile_all("cli", tree, jobs), runs)
    val = timed(lambda: [validate(b) for b in blobs], runs)
    opt = timed(lambda: [optimize(b) for b in blobs], runs)
    size = statistics.median(len(b) for b in blobs) / 1024
    report(f"{len(jobs)} jobs: permutations of {source} ({lines} lines with includes, "
           f"{size:.0f} KiB SPIR-V), median of {runs} runs", len(jobs), capi, cli, val, opt)


def report(title: str, n: int, capi: float, cli: float, val: float, opt: float) -> None:
    def row(name, seconds, ratio=""):
        return f"| {name} | {seconds * 1000:.1f} | {seconds * 1000 / n:.2f} | {ratio} |"

    print(title + "\n")
    print("| method | total (ms) | per job (ms) | subprocess / in-process |")
    print("|---|---:|---:|---:|")
    print(row("glslang C API, in-process", capi, "1.0x"))
    print(row("glslangValidator, one process per job", cli, f"{cli / capi:.1f}x"))
    print(row("spirv-val, in-process (per blob)", val))
    print(row("spirv-opt -O, in-process (per blob)", opt))
    print()


if __name__ == "__main__":
    main()
