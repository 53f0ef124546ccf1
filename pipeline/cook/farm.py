"""The build farm: compile a cook's cache misses on a Dask cluster.

``--scheduler tcp://HOST:8786`` connects to a running Dask scheduler (its workers
need this package and the same compiler wheels installed); ``--scheduler local:N``
starts a Dask ``LocalCluster`` of N worker processes for this cook only (started
when the first job needs it, so a cook with nothing to compile starts nothing).

:class:`FarmCompiler` has the interface of :class:`~pipeline.cook.scheduler.JobRunner`
(``run(jobs, on_done, fail_fast)``), so the scheduler's cache lookup, reasons,
progress and storing are the same for a local and a farm cook.  What differs:

- Jobs travel as data (:mod:`pipeline.cook.farm_worker`): the request and the
  text of its source closure, never a path.  The client reads each file once and
  checks it still has the content hash its job key was made with.
- Compiler identity: before sending anything, every worker reports its compiler
  identity (loading the compiler, so first jobs do not pay for it).  Workers with
  another identity get no jobs; should one receive a batch anyway it refuses it
  and the batch goes elsewhere.  No worker with the right compiler: a
  :class:`FarmError` naming both identities.
- Verification: the client checks every blob against the digest the worker sent
  and validates it with spirv-val again, as a local compile does (on a thread per
  core: SPIRV-Tools runs outside the GIL); the cache and outputs are written here
  only, so outputs are byte-identical to a local cook's.
- Lost workers: Dask reschedules the tasks of a worker that dies on another
  worker (after ``distributed.scheduler.allowed-failures`` deaths of the same task
  it gives up: a :class:`FarmError`).
- Batching: the scheduling overhead is measured first (round trips of an empty
  task), then one job per worker measures the per-job compile cost; later batches
  hold enough jobs that the overhead stays under :data:`OVERHEAD_SHARE` of the
  batch's compile time, capped so every worker stays fed until the end.
  :class:`FarmStats` reports what was measured (``pipeline cook --json``: ``farm``).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import math
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from distributed import Client, KilledWorker, LocalCluster, as_completed

from pipeline.cook.compile import CompileOutput, SourceTree, validate
from pipeline.cook.compile.request import target_info
from pipeline.cook.farm_worker import (
    BatchResult, CompilerMismatch, FarmBatch, FarmJob, compile_farm_batch, noop, worker_identity,
)
from pipeline.cook.jobs import StageJob
from pipeline.cpus import usable_cpus
from pipeline.digest import bytes_hash
from pipeline.errors import Diagnostic, Location, PipelineError

LOCAL_PREFIX = "local:"
OVERHEAD_SHARE = 0.05      # scheduling overhead per batch, at most this share of its compile time
MAX_BATCH = 64
IN_FLIGHT_PER_WORKER = 2   # batches queued per worker: one running, one arriving
OVERHEAD_PROBES = 5        # empty round trips timed before the first batch
CONNECT_TIMEOUT = 30.0     # seconds to reach a scheduler and see a worker
MAX_REFUSALS = 8           # refused sends of one batch before the cook gives up
# No dashboard; the scheduler's health endpoint on a free loopback port (its default, 8787, may be taken).
LOCAL_HTTP = {"dashboard_address": "127.0.0.1:0", "scheduler_kwargs": {"dashboard": False}}


class FarmError(PipelineError):
    """The farm cannot run the jobs: unreachable scheduler, no suitable worker, a batch lost."""

    @classmethod
    def about(cls, scheduler: str, message: str) -> "FarmError":
        return cls.at(scheduler, message)


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``('local', N)`` for ``local:N``, else ``('remote', address)``; a bad value is a FarmError."""
    if text.startswith(LOCAL_PREFIX):
        count = text[len(LOCAL_PREFIX):]
        if not count.isdigit() or int(count) < 1:
            raise FarmError.about(text, "expected local:N with N >= 1 worker processes")
        return "local", int(count)
    if "://" not in text:
        raise FarmError.about(text, "expected a Dask scheduler address (tcp://HOST:8786) or local:N")
    return "remote", text


@dataclass
class FarmStats:
    """What a farm run measured; ``to_json()`` is ``pipeline cook --json``'s ``farm``."""

    scheduler: str
    workers: int = 0
    refused_workers: dict[str, str] = field(default_factory=dict)  # address -> its compiler identity
    overhead_ms: float = 0.0       # median round trip of an empty task
    per_job_ms: float = 0.0        # mean compile time of one job on a worker
    batches: int = 0
    batch_sizes: list[int] = field(default_factory=list)
    resent: int = 0                # batches sent again after a refusal
    compile_s: float = 0.0         # sum of worker compile time
    wall_s: float = 0.0            # from the first send to the last result
    startup_s: float = 0.0         # cluster start or connect, identity check, overhead probes

    def to_json(self) -> dict:
        sizes = self.batch_sizes
        return {"scheduler": self.scheduler, "workers": self.workers, "refused_workers": self.refused_workers,
                "overhead_ms": round(self.overhead_ms, 3), "per_job_ms": round(self.per_job_ms, 3),
                "batches": self.batches, "max_batch": max(sizes, default=0),
                "mean_batch": round(sum(sizes) / len(sizes), 2) if sizes else 0, "resent": self.resent,
                "compile_s": round(self.compile_s, 4), "wall_s": round(self.wall_s, 4),
                "startup_s": round(self.startup_s, 4), "overhead_share": round(self.overhead_share, 4)}

    @property
    def overhead_share(self) -> float:
        """Estimated scheduling time over compile time: batches x overhead / compile time."""
        return self.batches * self.overhead_ms / 1000 / self.compile_s if self.compile_s else 0.0


def batch_size(overhead_s: float, per_job_s: float | None, remaining: int, workers: int) -> int:
    """Jobs in the next batch: enough to amortise the overhead, few enough to feed every worker."""
    if per_job_s is None or remaining <= 0:
        return 1
    wanted = math.ceil(overhead_s / (OVERHEAD_SHARE * max(per_job_s, 1e-6)))
    share = math.ceil(remaining / (max(workers, 1) * IN_FLIGHT_PER_WORKER))
    return max(1, min(MAX_BATCH, wanted, share))


class FarmCompiler:
    """Compiles stage jobs on a Dask cluster; the scheduler's seam, like ``JobRunner``."""

    def __init__(self, scheduler: str, tree: SourceTree, backend: str, identity: str, *,
                 connect_timeout: float = CONNECT_TIMEOUT):
        self.kind, self.address = parse_scheduler(scheduler)
        self.connect_timeout = connect_timeout
        self.scheduler = scheduler
        self.tree = tree
        self.display_prefix = tree.display_prefix
        self.backend = backend
        self.identity = identity
        self.calls = 0
        self.stats = FarmStats(scheduler)
        self.on_started: Callable[[Client], None] | None = None  # tests: act on the live cluster

    # ------------------------------------------------------------ cluster
    def _connect(self) -> tuple[Client, LocalCluster | None]:
        cluster = None
        try:
            if self.kind == "local":
                cluster = LocalCluster(n_workers=self.address, threads_per_worker=1, processes=True,
                                       silence_logs=logging.ERROR, **LOCAL_HTTP)
                client = Client(cluster, timeout=self.connect_timeout)
            else:
                client = Client(self.address, timeout=self.connect_timeout)
            client.wait_for_workers(1, timeout=self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            raise FarmError.about(self.scheduler, f"cannot use the Dask scheduler: {exc}") from None
        return client, cluster

    def _check_workers(self, client: Client) -> list[str]:
        """Addresses of workers whose compiler is ours; the others are recorded as refused."""
        found = client.run(worker_identity, self.backend, on_error="return")
        good = sorted(a for a, ident in found.items() if ident == self.identity)
        self.stats.refused_workers = {a: str(ident) for a, ident in sorted(found.items()) if ident != self.identity}
        if not good:
            seen = "; ".join(f"{a}: {i}" for a, i in self.stats.refused_workers.items())
            raise FarmError.about(self.scheduler, f"no worker has the compiler the jobs need "
                                                  f"({self.identity}); workers have: {seen}")
        return good

    def _measure_overhead(self, client: Client, good: list[str]) -> float:
        latencies = []
        for i in range(OVERHEAD_PROBES):
            began = time.perf_counter()
            client.submit(noop, i, pure=False, workers=good).result()
            latencies.append(time.perf_counter() - began)
        return statistics.median(latencies)

    # ------------------------------------------------------------ run
    def run(self, jobs: list[StageJob], on_done, fail_fast: bool = False) -> list[str]:
        """Compile ``jobs`` on the farm; ``on_done(job, output, where)`` per job; returns cancelled keys."""
        if not jobs:
            return []
        began = time.perf_counter()
        client, cluster = self._connect()
        try:
            good = self._check_workers(client)
            self.stats.workers = len(good)
            overhead = self._measure_overhead(client, good)
            self.stats.overhead_ms = overhead * 1000
            self.stats.startup_s = time.perf_counter() - began
            if self.on_started is not None:
                self.on_started(client)
            return _Run(self, client, good, overhead).go(jobs, on_done, fail_fast)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    def farm_batch(self, jobs: list[StageJob]) -> FarmBatch:
        """The data sent for ``jobs``: requests, closures and the text of every file they read."""
        files: dict[str, str] = {}
        for job in jobs:
            for rel, sha in job.closure:
                if sha not in files:
                    parsed = self.tree.parsed(rel)
                    if parsed.sha256 != sha:
                        raise FarmError.about(self.tree.display(rel), "changed during the cook; cook again")
                    files[sha] = parsed.text
        return FarmBatch(tuple(FarmJob(j.key, j.request, j.closure) for j in jobs), files, self.backend,
                         self.identity, self.display_prefix)


class _Run:
    """One farm run: sends batches, sizes them from what finished, delivers results."""

    def __init__(self, farm: FarmCompiler, client: Client, good: list[str], overhead: float):
        self.farm, self.client, self.good, self.overhead = farm, client, good, overhead
        self.stats = farm.stats
        self.queue: deque[StageJob] = deque()
        self.in_flight: dict = {}     # future -> (jobs, refusals)
        self.done_jobs = 0
        self.per_job: float | None = None

    def go(self, jobs: list[StageJob], on_done, fail_fast: bool) -> list[str]:
        self.queue.extend(jobs)
        pending = {j.key for j in jobs}
        started = time.perf_counter()
        completed = as_completed()
        with cf.ThreadPoolExecutor(max_workers=usable_cpus()) as self.checker:  # spirv-val frees the GIL
            for _ in self.good[:len(self.queue)]:  # first round: one job per worker measures the per-job cost
                self._send(completed, 1)
            stop = False
            for future in completed:
                batch, refusals = self.in_flight.pop(future)
                result = self._result(future, batch, refusals, completed)
                if result is not None:
                    failed = self._deliver(batch, result, on_done, pending)
                    stop = stop or (fail_fast and failed)
                while not stop and self.queue and len(self.in_flight) < len(self.good) * IN_FLIGHT_PER_WORKER:
                    self._send(completed, batch_size(self.overhead, self.per_job, len(self.queue), len(self.good)))
        self.stats.wall_s = time.perf_counter() - started
        return sorted(pending)

    def _send(self, completed, size: int, batch: list[StageJob] | None = None, refusals: int = 0) -> None:
        if batch is None:
            batch = [self.queue.popleft() for _ in range(min(size, len(self.queue)))]
            self.stats.batches += 1
            self.stats.batch_sizes.append(len(batch))
        future = self.client.submit(compile_farm_batch, self.farm.farm_batch(batch), pure=False,
                                    workers=self.good, allow_other_workers=True)
        self.in_flight[future] = (batch, refusals)
        completed.add(future)

    def _result(self, future, batch: list[StageJob], refusals: int, completed) -> BatchResult | None:
        """The batch's result; a refused batch is sent again (None), a lost one is a FarmError."""
        try:
            return future.result()
        except CompilerMismatch as exc:
            if refusals + 1 >= MAX_REFUSALS:
                raise FarmError.about(self.farm.scheduler, f"workers keep refusing jobs: {exc}") from None
            self.stats.resent += 1
            self._send(completed, len(batch), batch, refusals + 1)
            return None
        except KilledWorker as exc:
            raise FarmError.about(self.farm.scheduler, f"a batch of {len(batch)} jobs was lost: {exc}") from None

    def _deliver(self, batch: list[StageJob], result: BatchResult, on_done, pending: set) -> bool:
        """Verify and hand each job's output on; True when one failed to compile."""
        self.stats.compile_s += result.seconds
        self.done_jobs += len(batch)
        self.per_job = self.stats.compile_s / self.done_jobs
        self.stats.per_job_ms = self.per_job * 1000
        by_key = {r.key: r for r in result.results}
        outputs = self.checker.map(lambda job: self._verified(job, by_key[job.key], result.worker), batch)
        failed = False
        for job, output in zip(batch, outputs):
            self.farm.calls += 1
            on_done(job, output, where=result.worker)
            pending.discard(job.key)
            failed = failed or output.spirv is None
        return failed

    def _verified(self, job: StageJob, found, worker: str) -> CompileOutput:
        """The worker's output after the client's own checks: digest, then spirv-val."""
        if found.spirv is None:
            return CompileOutput(None, found.diagnostics)
        if bytes_hash(found.spirv) != found.digest:
            raise FarmError.about(worker, f"job {job.key[:12]}: the blob does not match the digest sent with it")
        problems = validate(found.spirv, job.request.target) if target_info(job.request.target).is_spirv else []
        if problems:
            where = Location(self.farm.tree.display(job.request.source))
            return CompileOutput(None, found.diagnostics + tuple(Diagnostic(where, f"spirv-val: {p}")
                                                                   for p in problems))
        return CompileOutput(found.spirv, found.diagnostics)
