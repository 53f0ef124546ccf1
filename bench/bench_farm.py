"""The build farm benchmark (figure 9 of ``bench/run``): a compile-bound cook on Dask.

    python bench/bench_farm.py [--files 1000] [--out FILE]

A shader change (a comment appended to ``pbr/common.glsl``, which every stage
includes) invalidates every job of a generated world; the world is then cooked
three times, each after its own change, so each cook compiles every job:

- on the local process pool (2 workers), the baseline;
- on a Dask LocalCluster of 1 worker process (``--scheduler local:1``);
- on a Dask LocalCluster of 2 worker processes (``--scheduler local:2``).

Scanning and rule evaluation are warm (a first cook recorded them), so what
differs is compiling.  Overheads measured in the same run:

- Dask: the round trip of an empty task (what the farm measures before sending
  jobs) and per job after batching (round trip / mean batch size);
- the local pool: the round trip of an empty task on a warm ``ProcessPoolExecutor``;
- the client's own cost per result: its checks of a worker's result (farm_trust.job_output: shape,
  digest, SPIR-V header and entry point; the worker ran spirv-val) and the store write.

From them, :func:`projection` estimates a cook on 8, 32 and 128 workers; its
assumptions are written next to the table in RESULTS.md.

:func:`cold_cooks` sets a cold cook of a larger world (fresh cache and outputs) on a
LocalCluster of 2 workers against the same cook on the local pool of 2, in turn (a ``local:N``
cluster compiles; its chunks stay on this machine's pool, :mod:`pipeline.compile.farm_chunks`).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

from pipeline import api  # noqa: E402
from pipeline.cache.store import Store  # noqa: E402
from pipeline.compile.farm import batch_size  # noqa: E402
from pipeline.compile.scheduler import store_result  # noqa: E402
from pipeline.compile.farm_trust import job_output  # noqa: E402
from pipeline.compile.farm_worker import FarmResult, noop  # noqa: E402
from pipeline.compilers.reflect import reflect, tool_version  # noqa: E402
from pipeline.digest import bytes_hash  # noqa: E402

CHANGED = "pbr/common.glsl"
CONFIGS = (("pool", "none"), ("dask 1 worker", "local:1"), ("dask 2 workers", "local:2"))
PROJECTED_WORKERS = (1, 2, 8, 32, 128)
PROJECTED_JOBS = 10_000
ASSUMPTIONS = (
    "Expected cook time T(W) = F + S + max(N x c / W + ceil(N / (b x W)) x o, N x d): F the cook's work "
    "besides compiling (scan, plan, outputs; measured: the 2-worker cook minus its farm phase), S the farm's "
    "start (measured for local:2: cluster start, compiler identity check, overhead probes; a standing farm "
    "only connects), c the mean compile time of one job on a worker (measured with 1 worker, which has a "
    "core to itself; it includes the worker's reflection of the blob with SPIRV-Cross, which the cook no longer runs "
    "for the farm's blobs), o the scheduling round trip per batch (measured with 2 workers), b the batch size the "
    "farm picks for W workers (overhead <= 5% of a batch's compile time, at most N / 2W), d the client's cost "
    "per result: its checks of the result (shape, digest, SPIR-V header and entry point) and the store write. "
    "Assumed: workers as fast as this machine's cores, one worker process per core, a network like loopback "
    "(o as measured), compile cost uniform over jobs, no overlap of scheduling and compiling (pessimistic), "
    "and a client as fast as this machine; the N x d term is the client-side bound that flattens the curve "
    "at high W."
)


def shader_change(materials: Path, n: int) -> None:
    path = materials / CHANGED
    path.write_text(path.read_text() + f"// bench change {n}\n")


def pool_round_trip(samples: int = 40) -> float:
    """Median round trip of an empty task on a warm local process pool (seconds)."""
    with cf.ProcessPoolExecutor(max_workers=1) as pool:
        pool.submit(noop, 0).result()
        times = []
        for i in range(samples):
            began = time.perf_counter()
            pool.submit(noop, i).result()
            times.append(time.perf_counter() - began)
    return statistics.median(times)


def client_cost(cache: Path, result: api.CookResult, scratch: Path, sample: int = 40) -> tuple[float, float]:
    """Mean client-side seconds per result: (the client's checks of a worker's result, storing its blob,
    reflection and records), each as the client does it: :func:`pipeline.compile.farm_trust.job_output`, then the scheduler's
    store write, a batch's results in one commit (batches of the cook's mean farm batch)."""
    size = max(1, round((result.farm or {}).get("mean_batch") or 1))
    with Store(cache) as source, Store(scratch) as target:
        jobs = sorted(result.run.results.items())[:sample]
        blobs = [(key, source.get_blob(r.blob)) for key, r in jobs if r.blob]
        revision = tool_version()  # a worker sends each blob's reflection: the client checks and stores it too
        sent = [(result.plan.jobs[key], (FarmResult(key, blob, bytes_hash(blob), (), 0.01, reflect(blob)),))
                for key, blob in blobs]
        began = time.perf_counter()
        outputs = []
        for job, results in sent:
            output, why = job_output(job, results, reflector=revision)
            assert output is not None, why
            outputs.append((job, output))
        checked = time.perf_counter()
        for at in range(0, len(outputs), size):
            with target.batched():
                for job, output in outputs[at:at + size]:
                    store_result(job, output, target, "")
        stored = time.perf_counter()
        count = max(1, len(blobs))
        return (checked - began) / count, (stored - checked) / count


def projection(fixed: float, startup: float, per_job: float, overhead: float, client: float,
               jobs: int, workers: int) -> float:
    """Expected cook time on ``workers`` workers (see :data:`ASSUMPTIONS`); ``client``: seconds per result."""
    size = batch_size(overhead, per_job, jobs, workers)
    farm = jobs * per_job / workers + math.ceil(jobs / (size * workers)) * overhead
    return fixed + startup + max(farm, jobs * client)


def measure(root: Path, rules: Path, materials: Path, workdir: Path, log=print) -> dict:
    """Cook ``root`` after a shader change on the pool and on Dask; the figures and the projection."""
    original = (materials / CHANGED).read_text()
    cache, out = workdir / "farm-cache", workdir / "farm-out"
    rows = {}
    try:
        api.cook(api.open_world(root, rules=rules, materials=materials), cache=cache, out=out, jobs=2,
                 scheduler="none")  # scan and rules recorded: the cooks below only compile
        for i, (name, scheduler) in enumerate(CONFIGS):
            shader_change(materials, i)
            world = api.open_world(root, rules=rules, materials=materials)
            began = time.perf_counter()
            result = api.cook(world, cache=cache, out=out, jobs=2, scheduler=scheduler)
            wall = time.perf_counter() - began
            changed = sorted(k for k, job in result.plan.jobs.items() if any(f == CHANGED for f, _ in job.closure))
            assert sorted(result.run.compiled) == changed and not result.errors, name  # every job reading it
            rows[name] = {"wall": wall, "jobs": len(changed), "farm": result.farm}
            log(f"figure 9: {name}: {wall:.2f} s for {len(changed)} jobs"
                + (f", farm {result.farm}" if result.farm else ""))
        check, store = client_cost(cache, result, workdir / "scratch-cache")
    finally:
        (materials / CHANGED).write_text(original)
    return summarise(rows, pool_round_trip(), check, store)


AT_ADDRESS = "dask 2 workers at an address"  # a standing LocalCluster named by its address, as a farm is


def cold_cooks(root: Path, rules: Path, materials: Path, workdir: Path, log=print) -> dict:
    """A cold cook (fresh cache and outputs) of ``root`` on the local pool of 2, on a LocalCluster of 2
    workers (``local:2``: compiles only) and on a standing LocalCluster of 2 named by its address (compiles
    and the chunks' scans and rules), in turn: each one's wall time, jobs compiled, the cluster's start and
    what the farm did of the chunks."""
    import logging

    from distributed import LocalCluster

    from pipeline.compile.farm import LOCAL_HTTP

    rows = {}
    for name, scheduler in (CONFIGS[0], CONFIGS[2], (AT_ADDRESS, None)):
        cache, out = workdir / "cold-cache", workdir / "cold-out"
        for folder in (cache, out):
            shutil.rmtree(folder, ignore_errors=True)
        with contextlib.ExitStack() as stack:
            if scheduler is None:  # started before the clock: a standing farm
                scheduler = stack.enter_context(LocalCluster(
                    n_workers=2, threads_per_worker=1, processes=True, silence_logs=logging.CRITICAL,
                    **LOCAL_HTTP)).scheduler_address
            began = time.perf_counter()
            result = api.cook(api.open_world(root, rules=rules, materials=materials), cache=cache, out=out, jobs=2,
                              scheduler=scheduler)
            wall = time.perf_counter() - began
        assert not result.errors and result.run.compiled, name
        rows[name] = {"wall": wall, "compiled": len(result.run.compiled), "chunks": result.chunks,
                      "startup_s": (result.farm or {}).get("connect_s", (result.farm or {}).get("startup_s")),
                      "farm_chunks": (result.farm or {}).get("chunks")}
        log(f"figure 9: cold cook of {root.name} on {name}: {wall:.2f} s, {len(result.run.compiled)} jobs compiled"
            + (f", chunks {rows[name]['farm_chunks']}" if rows[name]["farm_chunks"] else ""))
    return rows


def summarise(rows: dict, pool_trip: float, check: float, store: float) -> dict:
    one, two = rows["dask 1 worker"]["farm"], rows["dask 2 workers"]
    farm = two["farm"]
    per_job, overhead = one["per_job_ms"] / 1000, farm["overhead_ms"] / 1000  # c: one worker, no contention
    client = check + store
    fixed = two["wall"] - farm["wall_s"] - farm["startup_s"]
    jobs = two["jobs"]
    table = [{"workers": w, "jobs": n, "seconds": projection(fixed, farm["startup_s"], per_job, overhead, client, n, w)}
             for n in (jobs, PROJECTED_JOBS) for w in PROJECTED_WORKERS]
    return {"rows": rows, "pool_trip_ms": pool_trip * 1000, "check_ms": check * 1000, "store_ms": store * 1000,
            "client_ms": client * 1000, "fixed_s": fixed, "dask_trip_ms": farm["overhead_ms"],
            "dask_per_job_ms": farm["overhead_ms"] / max(farm["mean_batch"], 1), "per_job_ms": per_job * 1000,
            "overhead_share": farm["overhead_share"], "projection": table}


def figures(found: dict, figure_cls) -> list:
    """Figure 9 rows for bench/run's table."""
    rows = found["rows"]
    one, two, pool = rows["dask 1 worker"], rows["dask 2 workers"], rows["pool"]
    jobs = two["jobs"]
    return [
        figure_cls(9, f"farm: shader change, {jobs} jobs, LocalCluster 2 workers vs 1", two["wall"], "s",
                   f"1 worker {one['wall']:.2f} s; local pool {pool['wall']:.2f} s", one["wall"] / two["wall"],
                   ">= 1.3x", one["wall"] / two["wall"] >= 1.3,
                   f"cluster start {two['farm']['startup_s']:.2f} s included"),
        figure_cls(9, "farm: Dask scheduling per job (batched) vs local pool round trip", found["dask_per_job_ms"],
                   "ms/job", f"pool {found['pool_trip_ms']:.2f} ms/task", found["dask_per_job_ms"] / found["pool_trip_ms"],
                   "scheduling <= 5% of compile", found["overhead_share"] <= 0.05,
                   f"Dask round trip {found['dask_trip_ms']:.1f} ms/batch; {found['overhead_share'] * 100:.1f}% of "
                   f"compile time; compile {found['per_job_ms']:.1f} ms/job"),
        figure_cls(9, "farm: client time per result (its checks + store write) vs a job's compile", found["client_ms"],
                   "ms/result", f"compile {found['per_job_ms']:.1f} ms/job",
                   found["client_ms"] / found["per_job_ms"], "<= 5%", found["client_ms"] <= 0.05 * found["per_job_ms"],
                   f"checks {found['check_ms']:.3f} ms, store write {found['store_ms']:.2f} ms"),
        *cold_figures(found.get("cold"), found.get("cold_files"), figure_cls),
    ]


def cold_figures(rows: dict | None, files: int | None, figure_cls) -> list:
    """Figure 9's cold-cook rows: a LocalCluster of 2 workers against the local pool of 2, and a farm at an address."""
    if not rows:
        return []
    pool, dask = rows["pool"], rows["dask 2 workers"]
    chunks = dask.get("farm_chunks") or {}
    return [figure_cls(9, f"farm: cold cook of {files} files, LocalCluster 2 workers vs local pool of 2", dask["wall"],
                       "s", f"local pool {pool['wall']:.2f} s", pool["wall"] / dask["wall"], "no slower (>= 1.0x)",
                       dask["wall"] <= pool["wall"],
                       f"cluster start {dask['startup_s']:.2f} s included; {dask['compiled']} jobs compiled on the "
                       + (f"cluster, {chunks['done']} of {dask['chunks']} chunks scanned and evaluated there, outputs "
                          if chunks.get("done") else "cluster (a local cluster's chunks stay on this machine), scanning, "
                          "rules and outputs ") + "on the cooking machine's pool (one run each)"),
            *address_figure(rows.get(AT_ADDRESS), pool, files, figure_cls)]


def address_figure(row: dict | None, pool: dict, files: int | None, figure_cls) -> list:
    """Figure 9's row of a farm at an address: the chunks' scans and rules there too, against the pool of 2."""
    chunks = (row or {}).get("farm_chunks")
    if not chunks or not chunks.get("done"):
        return []
    worker_ms = chunks["wall_s"] * 2 / chunks["done"] * 1000  # a chunk's time on one of the 2 workers
    client_ms = chunks["client_s"] / chunks["done"] * 1000
    return [figure_cls(9, f"farm at an address: cold cook of {files} files, chunks and compiles on 2 workers of this "
                          "machine vs the local pool of 2", row["wall"], "s", f"local pool {pool['wall']:.2f} s",
                       pool["wall"] / row["wall"], "report", None,
                       f"{chunks['done']} of {row['chunks']} chunks on the workers in {chunks['wall_s']:.2f} s "
                       f"({worker_ms:.0f} ms a chunk on a worker); the cook's own time per chunk {client_ms:.1f} ms "
                       f"(storing its records, merging): it keeps about {worker_ms / client_ms:.0f} workers fed")]


def render(found: dict) -> list[str]:
    """The farm section of RESULTS.md: measured cooks, overheads, projection and its assumptions."""
    lines = ["", "## Build farm (figure 9)", "",
             "| cook after a shader change | wall (s) | batches | mean batch | per job (ms) | farm start (s) |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, row in found["rows"].items():
        farm = row["farm"] or {}
        lines.append(f"| {name} ({row['jobs']} jobs) | {row['wall']:.2f} | {farm.get('batches', '-')} | "
                     f"{farm.get('mean_batch', '-')} | {farm.get('per_job_ms', '-')} | {farm.get('startup_s', '-')} |")
    lines += ["", f"Overheads: Dask round trip {found['dask_trip_ms']:.2f} ms per batch "
                  f"({found['dask_per_job_ms']:.2f} ms per job after batching); local pool round trip "
                  f"{found['pool_trip_ms']:.2f} ms per task; client per result: its checks "
                  f"{found['check_ms']:.3f} ms, store write {found['store_ms']:.2f} ms; "
                  f"cook work besides compiling {found['fixed_s']:.2f} s; compile {found['per_job_ms']:.1f} ms per job "
                  "on one worker.", "",
              "| workers | expected cook (s), " + f"{found['projection'][0]['jobs']} jobs | "
              + f"expected cook (s), {PROJECTED_JOBS:,} jobs |", "|---:|---:|---:|"]
    by = {(p["workers"], p["jobs"]): p["seconds"] for p in found["projection"]}
    small = found["projection"][0]["jobs"]
    for w in PROJECTED_WORKERS:
        lines.append(f"| {w} | {by[(w, small)]:.2f} | {by[(w, PROJECTED_JOBS)]:.1f} |")
    lines += ["", ASSUMPTIONS]
    cold = found.get("cold")
    if cold:
        lines += ["", f"Cold cook of the {found['cold_files']:,}-file world (fresh cache and outputs, one run each): "
                      + "; ".join(f"{name} {row['wall']:.2f} s ({row['compiled']} jobs compiled"
                                  + (f", cluster start {row['startup_s']:.2f} s" if row["startup_s"] is not None else "")
                                  + ")" for name, row in cold.items())
                      + ". On `local:2` only the compiles run on its workers; on the cluster at an address (started "
                        "before the clock, as a standing farm) the chunks' scans and rules run there too."]
    return lines


def main(argv: list[str] | None = None) -> int:
    import worldgen
    from pipeline.builtin import builtin_materials_dir, builtin_rules_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000, help="files of the generated world")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pipeline-bench-farm-") as tmp:
        work = Path(tmp)
        shutil.copytree(builtin_rules_dir(), work / "rules")
        shutil.copytree(builtin_materials_dir(), work / "materials")
        worldgen.generate(work / "world", worldgen.WorldSpec(chunks=10, files_per_chunk=args.files // 10, props=400))
        found = measure(work / "world", work / "rules", work / "materials", work)
    print("\n".join(render(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
