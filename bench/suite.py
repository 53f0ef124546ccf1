"""The benchmark suite behind ``bench/run``: ten figures, each against a baseline of the same run.

    bench/run [--quick | --large] [--out bench/RESULTS.md] [--plot bench/scaling.svg] [--workdir DIR]

Figures (issue 6):

1. compile backend: glslangValidator per job / in-process glslang, same jobs (bench_compile.py).
2. cold cook overhead: cook wall / (sum of in-process compile times of its unique jobs / workers).
3. no-op cook of the largest world (10,000 files): seconds, and as a share of its cold cook.
4. one-chunk edit (one file changed, a few new keys): wall minus the compile time of the new jobs.
5. scan: MB/s of glTF JSON against json.loads and pygltflib, same files (bench_scan.py).
6. exact valid count of a 40-feature rule set (bench_validcount.py).
7. peak memory of the largest world's cold cook (RSS of the cook's process tree, polled from /proc).
8. scaling at 1k, 3k and 10k files (and 100k with ``--large``, outside CI): cold cook, no-op and
   one-chunk edit against world size, and the cold cook's CPU (its process tree, user + system)
   less its compiles per file the world adds, from the first step of sizes to the last.
9. build farm: a shader change cooked on a Dask LocalCluster of 1 and 2 workers, Dask
   overhead per job against the local pool's, a projection to 8/32/128 workers, and a cold
   cook of the 10,000-file world on a LocalCluster of 2 against the local pool (bench_farm.py).
10. runtime on lavapipe: pipeline states created per second, and the time to load a chunk
   (index + shader library + modules + pipelines), against the same pipelines from .spv files on disk
   (bench_runtime.py; left out with a note where Vulkan cannot run).
16. ``pipeline watch`` on the largest world: a save of one file to its chunk index on disk (bench_speed.py).
17. output bytes of each world against its unique blob bytes plus 100 bytes per draw (bench_outputs.py).
18. the largest world after a one-file edit, whole processes: the whole-world cook against three
    stat walks plus the chunk's own cook, and the first no-op after it against a stat walk
    (bench_world_edit.py).

Cold cooks run in a child process (``--child``) on an empty cache, timed inside the
child around ``api.cook`` (interpreter start-up and imports excluded, reported
apart), while the parent polls the RSS of the child and its pool workers.  No-op
cooks and edits run in this process through ``pipeline.api`` (warm imports), the
median of several runs.  The CLI's own overhead (start-up, imports) is measured
apart.  Every compile baseline is this process compiling the same requests one
after another with the in-process backend (``compile_batch``, what a pool worker
runs), after a warm-up.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(BENCH)]

import bench_farm  # noqa: E402
import bench_outputs  # noqa: E402
import bench_speed  # noqa: E402
import bench_world_edit  # noqa: E402
import worldgen  # noqa: E402

from pipeline import api  # noqa: E402
from pipeline.builtin import builtin_materials_dir  # noqa: E402
from pipeline.cache.job_records import JOB
from pipeline.compilers import compile_batch, get_backend  # noqa: E402
from pipeline.cpus import usable_cpus

WORKERS = 2  # compile workers of every cook; on this machine: all its cores
LIBRARY: dict[str, Path] = {}  # "rules"/"materials" -> the snapshot every cook of a run uses


def snapshot_library(workdir: Path) -> None:
    """Copy the rule sets and shader library once, so edits made during a run cannot mix results."""
    from pipeline.builtin import builtin_rules_dir

    for name, source in (("rules", builtin_rules_dir()), ("materials", builtin_materials_dir())):
        target = workdir / "library" / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
        LIBRARY[name] = target


def world(root: Path) -> "api.World":
    return api.open_world(root, rules=LIBRARY.get("rules"), materials=LIBRARY.get("materials"))


# ---------------------------------------------------------------- configuration
@dataclass(frozen=True)
class Config:
    sizes: tuple[tuple[int, int], ...]       # (chunks, files per chunk), smallest first
    props: int                               # prop palette of the generated worlds
    runs: int                                # runs of each cheap measurement (median)
    cold_runs: int                           # cold cooks of the smaller worlds (median)
    compile_jobs: int                        # permutations in figure 1
    scan_quick: bool                         # bench_scan quick mode (pygltflib on 60 files)
    corpus: Path = ROOT / "corpus"

    @property
    def largest(self) -> tuple[int, int]:
        return self.sizes[-1]


FULL = Config(sizes=((10, 100), (30, 100), (100, 100)), props=400, runs=5, cold_runs=2, compile_jobs=16,
              scan_quick=False)
LARGE = Config(sizes=((10, 100), (100, 100), (1000, 100)), props=400, runs=3, cold_runs=1, compile_jobs=16,
               scan_quick=False)
QUICK = Config(sizes=((4, 25), (8, 50)), props=24, runs=3, cold_runs=1, compile_jobs=4, scan_quick=True)


# ---------------------------------------------------------------- results
@dataclass
class Figure:
    number: int
    name: str
    value: float
    unit: str
    baseline: str
    ratio: float | None
    target: str
    met: bool | None
    note: str = ""


@dataclass
class Results:
    machine: dict
    figures: list[Figure] = field(default_factory=list)
    scaling: list[dict] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def machine() -> dict:
    return {
        "cores": usable_cpus(), "python": platform.python_version(), "platform": platform.platform(terse=True),
        "compiler": get_backend("capi").identity, "load_start": os.getloadavg()[0],
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def median_time(fn, runs: int, budget: float = 60.0, samples: list[float] | None = None) -> float:
    """Median wall time of up to ``runs`` calls (counting ``samples`` already taken); stops early
    once ``budget`` seconds are spent."""
    samples = list(samples or [])
    while len(samples) < runs and sum(samples) < budget:
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# ---------------------------------------------------------------- compile baselines
class CompileClock:
    """In-process compile time of single requests, measured once per job key."""

    def __init__(self, materials: Path):
        self.materials = materials
        self.seconds: dict[str, float] = {}
        self._warm = False

    def time_jobs(self, jobs) -> float:
        """Sum of the compile times of ``jobs`` (StageJob list), one request at a time."""
        for job in jobs:
            if job.key not in self.seconds:
                self.seconds[job.key] = self._time(job.request)
        return sum(self.seconds[j.key] for j in jobs)

    def _time(self, request) -> float:
        if not self._warm:
            compile_batch([request], self.materials, "capi")  # load glslang, parse includes
            self._warm = True
        start = time.perf_counter()
        compile_batch([request], self.materials, "capi")
        return time.perf_counter() - start


# ---------------------------------------------------------------- cold cooks in a child
def child_cook(root: str, cache: str, out: str, jobs: int, rules: str, materials: str) -> None:
    """``bench/run --child``: one cook, its wall time and own peak RSS as JSON on stdout."""
    start = time.perf_counter()
    result = api.cook(api.open_world(root, rules=rules, materials=materials), cache=cache, out=out, jobs=jobs)
    wall = time.perf_counter() - start
    print(json.dumps({"wall": wall, "compiled": len(result.run.compiled), "jobs": len(result.plan.jobs),
                      "keys": result.keys, "draws": result.draws, "errors": len(result.errors),
                      "maxrss_mb": _own_peak_mb()}))


def _own_peak_mb() -> float:
    """This process's peak RSS (VmHWM: reset by exec, unlike ru_maxrss, which keeps the launcher's), MB."""
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM:")) / 1024


def _pss(pid: int) -> int:
    """Proportional set size of one process (shared pages split between their users), bytes."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree_rss(pid: int) -> tuple[int, int, int]:
    """(RSS, PSS, largest one process's RSS) bytes of ``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, pss, largest, stack = 0, 0, 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        largest = max(largest, rss.get(p, 0))
        pss += _pss(p)
        stack.extend(children.get(p, ()))
    return total, pss, largest


def cold_cook(world: Path, workdir: Path) -> dict:
    """A cold cook (fresh cache and outputs) in a child process, with its peak tree RSS."""
    cache, out = workdir / "cache", workdir / "out"
    for folder in (cache, out):
        shutil.rmtree(folder, ignore_errors=True)
    cmd = [sys.executable, str(BENCH / "run"), "--child", str(world), str(cache), str(out), str(WORKERS),
           str(LIBRARY["rules"]), str(LIBRARY["materials"])]
    start, before = time.perf_counter(), _children_cpu()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    peak = [0, 0, 0]

    def poll() -> None:
        while proc.poll() is None:
            found = _tree_rss(proc.pid)
            peak[:] = [max(a, b) for a, b in zip(peak, found)]
            time.sleep(0.05)

    watcher = threading.Thread(target=poll)
    watcher.start()
    stdout, _ = proc.communicate()
    watcher.join()
    if proc.returncode != 0:
        raise RuntimeError(f"cold cook of {world} failed ({proc.returncode})")
    doc = json.loads(stdout.strip().splitlines()[-1])
    doc.update(process_wall=time.perf_counter() - start, tree_peak_mb=peak[0] / 2**20, tree_pss_mb=peak[1] / 2**20,
               largest_mb=max(peak[2] / 2**20, doc["maxrss_mb"]), cpu=_children_cpu() - before)
    return doc


def _children_cpu() -> float:
    """User + system seconds of every child this process has waited for (and of their waited-for children):
    taken around a cold cook, the CPU of the cook's whole process tree, its pool workers included."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def cpu_per_added_file(scaling: list[dict]) -> list[tuple[int, int, float]]:
    """(files, more files, CPU seconds per file added between them) for each step of sizes: the cold cook's
    CPU less its compiles (the same unique jobs at every size), so what is left grows with the files alone."""
    steps = []
    for small, big in zip(scaling, scaling[1:]):
        added = (big["cpu"] - big["compile_cpu"]) - (small["cpu"] - small["compile_cpu"])
        steps.append((small["files"], big["files"], added / (big["files"] - small["files"])))
    return steps


# ---------------------------------------------------------------- one world
@dataclass
class WorldRun:
    spec: worldgen.WorldSpec
    root: Path
    cache: Path
    out: Path
    cold: list[dict] = field(default_factory=list)
    compile_sum: float = 0.0
    noop: float = 0.0
    edit: float = 0.0
    edit_compile: float = 0.0
    edit_compile_cpu: float = 0.0  # the same compiles' CPU seconds, all workers together
    edit_jobs: int = 0
    edit_keys: int = 0
    gen_seconds: float = 0.0
    summary: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)  # bench_outputs.output_sizes after its cold cook

    @property
    def files(self) -> int:
        return self.spec.files

    @property
    def cold_wall(self) -> float:
        return statistics.median(c["wall"] for c in self.cold)


def run_world(spec: worldgen.WorldSpec, workdir: Path, clock: CompileClock, cfg: Config, cold_runs: int,
              log) -> WorldRun:
    root = workdir / f"world-{spec.files}"
    shutil.rmtree(root, ignore_errors=True)
    start = time.perf_counter()
    summary = worldgen.generate(root, spec)
    run = WorldRun(spec, root, workdir / "cache", workdir / "out", gen_seconds=time.perf_counter() - start,
                   summary=summary)
    log(f"world {spec.files} files: generated in {run.gen_seconds:.1f} s ({summary['draws']} draws)")
    while len(run.cold) < cold_runs and sum(c["wall"] for c in run.cold) < 30:
        run.cold.append(cold_cook(root, workdir))
        log(f"  cold cook: {run.cold[-1]['wall']:.2f} s, {run.cold[-1]['compiled']} jobs, "
            f"tree peak RSS {run.cold[-1]['tree_peak_mb']:.0f} MB, PSS {run.cold[-1]['tree_pss_mb']:.0f} MB")
    start = time.perf_counter()
    cooked = api.cook(world(root), cache=run.cache, out=run.out, jobs=WORKERS)  # a no-op; its plan is the baseline's
    first = time.perf_counter() - start
    assert not cooked.run.compiled, "a cook after a cold cook compiled again"
    run.compile_sum = clock.time_jobs(list(cooked.plan.jobs.values()))
    run.noop = median_time(lambda: api.cook(world(root), cache=run.cache, out=run.out, jobs=WORKERS), cfg.runs,
                           samples=[first])
    log(f"  no-op cook: {run.noop:.3f} s; compile sum {run.compile_sum:.1f} s")
    run.sizes = bench_outputs.output_sizes(run.out, summary["draws"])
    log(f"  outputs: {run.sizes['total'] / 1e6:.2f} MB, unique blobs {run.sizes['blob_bytes'] / 1e6:.2f} MB, "
        f"{run.sizes['per_draw']:.1f} bytes per draw besides")
    measure_edit(run, clock, cfg)
    log(f"  one-chunk edit: {run.edit:.3f} s ({run.edit_jobs} new jobs, {run.edit_compile:.2f} s of compile)")
    return run


def measure_edit(run: WorldRun, clock: CompileClock, cfg: Config) -> None:
    """Median of runs of: rewrite one file (a few new keys), cook its chunk; then undo."""
    folder = run.root / worldgen.chunk_name(run.spec, 0)
    path = sorted(folder.iterdir())[0]
    original = path.read_bytes()
    samples, compile_times, compile_cpu = [], [], []
    with api.open_store(run.cache) as store:
        while len(samples) < cfg.runs and sum(samples) < 30:
            chunk = worldgen.edit_chunk(run.root, run.spec, 0)
            start = time.perf_counter()
            result = api.cook(world(run.root), chunk=chunk, cache=run.cache, out=run.out, jobs=WORKERS)
            samples.append(time.perf_counter() - start)
            new = [result.plan.jobs[k] for k in result.run.compiled]
            compile_cpu.append(clock.time_jobs(new))
            compile_times.append(compile_cpu[-1] / max(1, min(WORKERS, len(new))))
            run.edit_jobs = len(new)
            run.edit_keys = sum(1 for k in result.plan.stages if any(
                j in result.run.compiled for j in result.plan.stages[k].values()))
            for key in result.run.compiled:  # undo: forget the new jobs, restore the file and its scan entry
                store.delete(JOB, key)
            path.write_bytes(original)
            api.cook(world(run.root), chunk=chunk, cache=run.cache, out=run.out, jobs=WORKERS)
    run.edit = statistics.median(samples)
    run.edit_compile = statistics.median(compile_times)
    run.edit_compile_cpu = statistics.median(compile_cpu)


# ---------------------------------------------------------------- figures
def figure_compile(cfg: Config, results: Results, log) -> None:
    import bench_compile as bc

    found = bc.pbr_set(cfg.compile_jobs)
    tree, jobs, source = found if found else bc.fixture_set(cfg.compile_jobs)
    bc.compile_all("capi", tree, jobs)  # warm-up
    capi = median_time(lambda: bc.compile_all("capi", tree, jobs), cfg.runs)
    cli = median_time(lambda: bc.compile_all("cli", tree, jobs), max(1, cfg.runs // 2))
    ftree, fjobs, fsource = bc.fixture_set(cfg.compile_jobs)
    bc.compile_all("capi", ftree, fjobs)
    fcapi = median_time(lambda: bc.compile_all("capi", ftree, fjobs), cfg.runs)
    fcli = median_time(lambda: bc.compile_all("cli", ftree, fjobs), max(1, cfg.runs // 2))
    log(f"figure 1: {source}: capi {capi:.2f} s, cli {cli:.2f} s; {fsource}: capi {fcapi:.3f} s, cli {fcli:.2f} s")
    results.extra["compile"] = {"pbr": (len(jobs), capi, cli), "fixture": (len(fjobs), fcapi, fcli)}
    results.figures.append(Figure(
        1, f"compile backend ({len(jobs)} jobs of {source})", cli / len(jobs) * 1000, "ms/job (glslangValidator)",
        f"in-process {capi / len(jobs) * 1000:.0f} ms/job", cli / capi, ">= 20x", cli / capi >= 20,
        f"small shader ({fsource}): {fcli / len(fjobs) * 1000:.0f} vs {fcapi / len(fjobs) * 1000:.1f} ms/job, "
        f"{fcli / fcapi:.0f}x"))


def figure_scan(cfg: Config, results: Results, log) -> None:
    import contextlib
    import io

    import bench_scan as bs

    with contextlib.redirect_stdout(io.StringIO()):
        rows = bs.corpus_table(cfg.corpus, max(2, cfg.runs // 2), cfg.scan_quick)
    rate = {name: mbs for name, _, mbs in rows}
    scan_rate, json_rate = rate["scan (cold, no cache)"], rate["json.loads"]
    pyg = rate["pygltflib GLTF2.load"]
    log("figure 5: " + ", ".join(f"{n} {r:.1f} MB/s" for n, r in rate.items()))
    results.extra["scan"] = rate
    results.figures.append(Figure(5, "scan throughput vs json.loads (corpus, cold, no cache)", scan_rate, "MB/s",
                                  f"json.loads {json_rate:.1f} MB/s", scan_rate / json_rate, ">= 1.0x",
                                  scan_rate / json_rate >= 1.0, "see bench/profiles/scan-corpus.txt"))
    results.figures.append(Figure(5, "scan throughput vs pygltflib (same files)", scan_rate, "MB/s",
                                  f"pygltflib {pyg:.2f} MB/s", scan_rate / pyg, ">= 100x", scan_rate / pyg >= 100,
                                  "pygltflib timed on 60 files, scaled" if cfg.scan_quick else ""))


def figure_validcount(cfg: Config, results: Results, log) -> None:
    import bench_validcount as bv

    from pipeline.rules.counts import count_space

    rs = bv.generated(40)
    seconds = median_time(lambda: count_space(rs, "main"), cfg.runs)
    count = count_space(rs, "main")
    log(f"figure 6: 40 features, {count.valid:.3e} valid of {count.possible:.3e}: {seconds * 1000:.1f} ms")
    results.figures.append(Figure(6, "exact valid count, 40-feature rule set", seconds * 1000, "ms",
                                  f"{count.possible:.2e} possible keys", None, "< 1000 ms", seconds < 1.0,
                                  f"{count.valid:.3e} valid"))


def figure_farm(runs: list["WorldRun"], workdir: Path, results: Results, log) -> None:
    """Figure 9: the smallest world after a shader change, on the pool and on Dask, and a cold cook of the
    10,000-file world on both (bench_farm.py)."""
    workdir.mkdir(parents=True, exist_ok=True)
    found = bench_farm.measure(runs[0].root, LIBRARY["rules"], LIBRARY["materials"], workdir, log)
    ten = next((r for r in runs if r.files == 10_000), None)
    if ten is not None:
        found["cold"] = bench_farm.cold_cooks(ten.root, LIBRARY["rules"], LIBRARY["materials"], workdir, log)
        found["cold_files"] = ten.files
    results.figures += bench_farm.figures(found, Figure)
    results.extra["farm"] = found


def cli_overhead(world: "WorldRun", cfg: Config) -> dict:
    """Wall time of ``pipeline --version`` and of a no-op ``pipeline cook`` (full process).

    Run as ``python -m pipeline`` (what the installed script does), so a launcher of the
    Python installation (a pyenv shim) is not counted.
    """

    def run(args: list[str]) -> None:
        subprocess.run([sys.executable, "-m", "pipeline", *args], check=True, capture_output=True,
                       env=bench_speed._env())

    version = median_time(lambda: run(["--version"]), cfg.runs)
    noop = median_time(lambda: run(["cook", str(world.root), "--cache", str(world.cache), "--out",
                                    str(world.out), "-q", "-j", str(WORKERS), "--rules", str(LIBRARY["rules"]),
                                    "--materials", str(LIBRARY["materials"])]), 3, budget=20)
    imports = median_time(lambda: subprocess.run([sys.executable, "-c", "import pipeline.cli"], check=True),
                          cfg.runs)
    return {"version": version, "imports": imports, "noop": noop}


def world_figures(cfg: Config, results: Results, runs: list[WorldRun], log) -> None:
    small, big = runs[0], runs[-1]
    for r in runs:
        ideal = r.compile_sum / WORKERS
        results.scaling.append({
            "files": r.files, "chunks": r.spec.chunks, "draws": r.summary["draws"], "jobs": r.cold[0]["jobs"],
            "gen": r.gen_seconds, "cold": r.cold_wall, "ideal": ideal, "overhead": r.cold_wall / ideal,
            "noop": r.noop, "noop_share": r.noop / r.cold_wall, "edit": r.edit, "edit_compile": r.edit_compile,
            "edit_jobs": r.edit_jobs, "peak_mb": max(c["tree_peak_mb"] for c in r.cold),
            "pss_mb": max(c["tree_pss_mb"] for c in r.cold),
            "main_mb": max(c["maxrss_mb"] for c in r.cold),
            "largest_mb": max(c["largest_mb"] for c in r.cold),
            "cpu": statistics.median(c["cpu"] for c in r.cold), "compile_cpu": r.compile_sum,
        })
    s0 = results.scaling[0]
    results.figures.append(Figure(
        2, f"cold cook overhead ({small.files} files, {s0['jobs']} unique jobs, {WORKERS} workers)", small.cold_wall,
        "s", f"compile sum / {WORKERS} = {s0['ideal']:.2f} s", s0["overhead"], "<= 1.15", s0["overhead"] <= 1.15,
        "other sizes: " + ", ".join(f"{s['files']}: {s['overhead']:.2f}" for s in results.scaling[1:])))
    sb = results.scaling[-1]
    results.figures.append(Figure(
        3, f"no-op cook, {big.files} files ({big.spec.chunks} chunks)", big.noop, "s",
        f"its cold cook {big.cold_wall:.1f} s", big.noop / big.cold_wall, "< 1 s and < 2%",
        big.noop < 1.0 and big.noop / big.cold_wall < 0.02, "in-process api.cook, median"))
    overhead = big.edit - big.edit_compile
    results.figures.append(Figure(
        4, f"one-chunk edit, {big.files}-file world ({big.edit_jobs} new jobs)", big.edit, "s",
        f"compile of new jobs {big.edit_compile:.2f} s", big.edit / max(big.edit_compile, 1e-9),
        "wall - compile < 0.3 s", overhead < 0.3, f"wall - compile = {overhead:.3f} s"))
    ref = next((s for s in results.scaling if s["files"] == 10_000 and s is not sb), s0)  # the issue's: 100k vs 10k
    results.figures.append(Figure(
        7, f"peak memory of the largest process, cold cook of {big.files} files", sb["largest_mb"], "MB (RSS)",
        f"at {ref['files']} files {ref['largest_mb']:.0f} MB", sb["largest_mb"] / ref["largest_mb"],
        "< 1 GB and <= 1.5x", sb["largest_mb"] < 1024 and sb["largest_mb"] <= 1.5 * ref["largest_mb"],
        f"the cook's own process {sb['main_mb']:.0f} MB; process tree PSS {sb['pss_mb']:.0f} MB, RSS sum (shared "
        f"pages counted per process) {sb['peak_mb']:.0f} MB, with {WORKERS} pool workers"))
    for r in runs:
        z = r.sizes
        results.extra.setdefault("outputs", []).append({"files": r.files, **z})
        results.figures.append(Figure(
            17, f"output bytes, {r.files}-file world ({z['draws']} draws)", z["total"] / 1e6, "MB",
            f"unique blobs {z['blob_bytes'] / 1e6:.2f} MB + 100 B x draws = {z['budget'] / 1e6:.2f} MB",
            z["total"] / z["budget"], "<= 1", z["total"] <= z["budget"],
            f"{z['per_draw']:.1f} B per draw besides the blobs; library {z['library'] / 1e6:.2f} MB "
            f"({z['blobs']} blobs), its chunk table {z['chunk table'] / 1e6:.2f} MB, "
            f"chunk indexes {z['chunk indexes'] / 1e6:.2f} MB, "
            f"level manifests {z['level manifests'] / 1e6:.2f} MB"))
    per_file = [s["noop"] / s["files"] * 1e6 for s in results.scaling]
    edit_growth = runs[-1].edit / runs[0].edit
    results.figures.append(Figure(
        8, f"scaling {small.files} -> {big.files} files: one-chunk edit", big.edit, "s",
        f"at {small.files} files {small.edit:.3f} s", edit_growth, "edit flat (<= 1.5x); no-op linear",
        edit_growth <= 1.5 and per_file[-1] <= 1.5 * per_file[0],
        "no-op per file: " + ", ".join(f"{p:.0f} us" for p in per_file)))
    steps = cpu_per_added_file(results.scaling)
    if len(steps) >= 2:
        (a, b, first), (c, d, last) = steps[0], steps[-1]
        results.figures.append(Figure(
            8, f"scaling {a} -> {d} files: cold-cook CPU less compiles, per file added ({c} -> {d})", last * 1e3,
            "ms", f"per file added {a} -> {b}: {first * 1e3:.3f} ms", last / first, "<= 1.2x (flat per file)",
            last <= 1.2 * first, "the process tree's user + system seconds less the compile sum; steps: "
            + ", ".join(f"{x} -> {y}: {per * 1e3:.3f} ms" for x, y, per in steps)))


# ---------------------------------------------------------------- report
def figure_runtime(cfg: Config, results: Results, workdir: Path, log) -> None:
    import bench_runtime as br

    from pipeline.runtime.device import available

    reason = available(validation=False)
    if reason is not None:
        log(f"figure 10 left out: Vulkan cannot run here: {reason}")
        return
    world_dir = cfg.corpus if cfg.corpus and Path(cfg.corpus).is_dir() else br.SAMPLE
    workdir.mkdir(parents=True, exist_ok=True)
    m = br.measure(Path(world_dir), workdir, max(6, cfg.runs))
    log(f"figure 10: {m}")
    results.extra["runtime"] = m
    where = f"{m['pipelines']} states, {m['chunks']} chunks of {Path(world_dir).name}, {m['device'].split(' (')[0]}"
    results.figures.append(Figure(
        10, f"pipeline creation from the shader library ({where})", m["pak_rate"], "pipelines/s",
        f".spv files: {m['files_rate']:.0f}/s", m["pak_rate"] / m["files_rate"], "-", None,
        "creation calls only, validation layer off; the same driver calls, so ~1x up to noise"))
    results.figures.append(Figure(
        10, "load a chunk: index + shader library + modules + pipelines", m["pak_chunk_ms"], "ms/chunk",
        f".spv files + same pipelines: {m['files_chunk_ms']:.1f} ms", m["pak_chunk_ms"] / m["files_chunk_ms"],
        "-", None, "the baseline's pipeline descriptions are prepared before timing; the library path also opens "
        "shaders.pak, decodes the chunk index, reads its blobs' reflection and checks each blob's SHA-256"))


def render(results: Results, cfg: Config, quick: bool, plot_name: str | None) -> str:
    m = results.machine
    lines = [
        "# Benchmark results", "",
        f"`bench/run{' --quick' if quick else ''}` on {m['date']}: {m['cores']} cores (shared with other work: "
        f"load average {m['load_start']:.1f} at start, {m.get('load_end', 0):.1f} at end), Python {m['python']}, "
        f"{m['platform']}, {m['compiler']}.", "",
        "Every ratio is against a baseline measured in the same run; times are medians of several runs "
        "(cold cooks of the largest world: one run). Absolute times on a shared machine are noisy; ratios less so.",
        "",
        "| # | figure | value | baseline | ratio | target | met? | note |",
        "|---:|---|---:|---|---:|---|:---:|---|",
    ]
    for f in sorted(results.figures, key=lambda f: f.number):
        share = f.number in (3, 15) or f.target.endswith("%")
        ratio = "" if f.ratio is None else (f"{f.ratio * 100:.2f}%" if share else f"{f.ratio:.2f}x")
        met = {True: "yes", False: "**no**", None: "-"}[f.met]
        lines.append(f"| {f.number} | {f.name} | {f.value:.3g} {f.unit} | {f.baseline} | {ratio} | {f.target} | "
                     f"{met} | {f.note} |")
    lines += ["", f"Machine: {m['cores']} cores, Python {m['python']}, {m['compiler']}; date {m['date']}.", "",
              "## Scaling (figure 8)", "",
              "| files | chunks | draws | unique jobs | generate (s) | cold cook (s) | compile sum / workers (s) | "
              "cold / ideal | cold CPU less compiles, per file (ms) | no-op (s) | no-op / cold | one-chunk edit (s) | "
              "new-job compile (s) | peak PSS (MB) | largest process (MB) |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in results.scaling:
        lines.append(f"| {s['files']} | {s['chunks']} | {s['draws']} | {s['jobs']} | {s['gen']:.1f} | {s['cold']:.2f} | "
                     f"{s['ideal']:.2f} | {s['overhead']:.2f} | {(s['cpu'] - s['compile_cpu']) / s['files'] * 1e3:.3f} | "
                     f"{s['noop']:.3f} | {s['noop_share'] * 100:.2f}% | "
                     f"{s['edit']:.3f} | {s['edit_compile']:.3f} | {s['pss_mb']:.0f} | {s['largest_mb']:.0f} |")
    if plot_name:
        lines += ["", f"![cook time against world size]({plot_name})"]
    if results.extra.get("outputs"):
        lines += ["", "## Outputs (figure 17)", "",
                  "What a cold cook writes (output format 4: one shader library, a compact index per chunk, "
                  "a manifest per level) against the unique blob bytes it must write.", "",
                  "| files | draws | blobs | unique blob bytes | library | chunk table | chunk indexes | level manifests | "
                  "total | bytes per draw besides the blobs |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for z in results.extra["outputs"]:
            lines.append(f"| {z['files']} | {z['draws']} | {z['blobs']} | {z['blob_bytes']:,} | {z['library']:,} | "
                         f"{z['chunk table']:,} | {z['chunk indexes']:,} | {z['level manifests']:,} | {z['total']:,} | {z['per_draw']:.1f} |")
    cli = results.extra.get("cli")
    if cli:
        lines += ["", "## CLI process overhead (not in figures 3 and 4)", "",
                  "| what | wall (s) |", "|---|---:|",
                  f"| `python -c 'import pipeline.cli'` | {cli['imports']:.3f} |",
                  f"| `python -m pipeline --version` | {cli['version']:.3f} |",
                  f"| `python -m pipeline cook` no-op, {cli['files']} files (whole process, from its stamp) | "
                  f"{cli['noop']:.3f} |",
                  f"| the same no-op through `api.cook` in a warm process | {cli['api_noop']:.3f} |"]
    comp = results.extra.get("compile")
    if comp:
        lines += ["", "## Compile backends (figure 1)", "", "| jobs | in-process (s) | glslangValidator (s) | ratio |",
                  "|---|---:|---:|---:|"]
        for name, (n, capi, cli_s) in comp.items():
            lines.append(f"| {n} {name} | {capi:.3f} | {cli_s:.3f} | {cli_s / capi:.1f}x |")
    scan = results.extra.get("scan")
    if scan:
        lines += ["", "## Scan throughput on the corpus (figure 5)", "", "| method | MB/s of glTF JSON |", "|---|---:|"]
        lines += [f"| {name} | {rate:.2f} |" for name, rate in scan.items()]
    if results.extra.get("farm"):
        lines += bench_farm.render(results.extra["farm"])
    if any(f.number >= 11 for f in results.figures):
        lines += bench_speed.BOUNDS.rstrip().splitlines()
    lines += ["", "Reproduce: `bench/run` (full, about 5 minutes) or `bench/run --quick` (CI size). Worlds come from "
              "`bench/worldgen.py` with the feature frequencies of `bench/corpus_frequencies.json` "
              "(`bench/corpus_stats.py`).", ""]
    return "\n".join(lines)


def plot(results: Results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = [s["files"] for s in results.scaling]
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for key, label, style in (("cold", "cold cook", "o-"), ("ideal", "compile sum / workers", "o--"),
                              ("noop", "no-op cook", "s-"), ("edit", "one-chunk edit", "^-")):
        ax.plot(files, [s[key] for s in results.scaling], style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("world size (files)")
    ax.set_ylabel("wall time (s)")
    ax.set_title(f"cook time against world size ({results.machine['cores']} cores, {WORKERS} workers)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)  # off the lines
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ---------------------------------------------------------------- main
def run_all(cfg: Config, workdir: Path, out: Path, plot_path: Path | None, quick: bool, log=print,
            figures: tuple[str, ...] = ("compile", "scan", "validcount", "worlds", "cli", "farm", "runtime",
                                        "startup", "speed")
            ) -> Results:
    snapshot_library(workdir)
    results = Results(machine())
    clock = CompileClock(LIBRARY["materials"])
    if "validcount" in figures:
        figure_validcount(cfg, results, log)
    if "compile" in figures:
        figure_compile(cfg, results, log)
    if "scan" in figures:
        figure_scan(cfg, results, log)
    if "runtime" in figures:
        figure_runtime(cfg, results, workdir / "runtime", log)
    if "startup" in figures:
        bench_speed.figure_startup(cfg.corpus, workdir / "startup", LIBRARY, cfg.runs, results, Figure, log)
    if "speed" in figures:
        bench_speed.figure_backend_overhead(cfg.compile_jobs, cfg.runs, results, Figure, log)
    runs = []
    if "worlds" in figures:
        for i, (chunks, files) in enumerate(cfg.sizes):
            spec = worldgen.WorldSpec(chunks=chunks, files_per_chunk=files, props=cfg.props)
            cold_runs = 1 if i == len(cfg.sizes) - 1 else cfg.cold_runs
            runs.append(run_world(spec, workdir / f"w{i}", clock, cfg, cold_runs, log))
        world_figures(cfg, results, runs, log)
        if "speed" in figures:
            bench_speed.figure_limits(runs, WORKERS, results, Figure, log)
            bench_speed.figure_edit_process(runs[-1], LIBRARY, cfg.runs, WORKERS, results, Figure, log)
            bench_world_edit.figure_world_edit(runs[-1], LIBRARY, cfg.runs, WORKERS, results, Figure, log)
            bench_speed.figure_watch(runs[-1], LIBRARY, workdir / "watch", cfg.runs, WORKERS, results, Figure, log)
            bench_speed.figure_ninja(runs[0], LIBRARY, workdir / "peer", cfg.runs, WORKERS, results, Figure, log,
                                     sizes=tuple(runs))
        if "farm" in figures:
            figure_farm(runs, workdir / "farm", results, log)
        if "cli" in figures:
            try:
                results.extra["cli"] = {**cli_overhead(runs[0], cfg), "files": runs[0].files,
                                        "api_noop": runs[0].noop}
                log(f"cli: {results.extra['cli']}")
            except subprocess.CalledProcessError as exc:
                log(f"cli overhead not measured: {exc}")
    results.machine["load_end"] = os.getloadavg()[0]
    if plot_path is not None and results.scaling:
        plot(results, plot_path)
    out.write_text(render(results, cfg, quick, plot_path.name if plot_path and results.scaling else None))
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child_cook(*argv[1:4], int(argv[4]), *argv[5:7])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI-sized worlds and fewer runs (about a minute)")
    parser.add_argument("--large", action="store_true",
                        help="worlds of 1k, 10k and 100k files (tens of minutes; writes bench/RESULTS-large.md)")
    parser.add_argument("--out", type=Path, default=None, help="results file [bench/RESULTS.md]")
    parser.add_argument("--plot", type=Path, default=None, help="plot file [bench/scaling.svg]")
    parser.add_argument("--workdir", type=Path, default=None, help="where worlds and caches go [a temp folder]")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else LARGE if args.large else FULL
    out = args.out or BENCH / ("RESULTS-large.md" if args.large else "RESULTS.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    plot_path = args.plot or out.with_name("scaling-large.svg" if args.large else "scaling.svg")
    start = time.perf_counter()
    # whole-process figures measure the tool as installed: its bytecode compiled (as script/bootstrap and a
    # wheel install leave it), not recompiled from source by every process started under PYTHONDONTWRITEBYTECODE
    compileall.compile_dir(str(ROOT / "pipeline"), quiet=1, workers=0)
    with tempfile.TemporaryDirectory(prefix="pipeline-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        run_all(cfg, workdir, out, plot_path, args.quick,
                log=lambda line: print(f"[{time.perf_counter() - start:6.1f} s] {line}", flush=True))
    print(f"wrote {out} and {plot_path} in {time.perf_counter() - start:.0f} s")
    return 0
