"""One farm run: batches out, checked results back, and what the farm did not deliver compiled here.

:class:`FarmRun` is the loop behind :class:`~pipeline.compile.farm.FarmCompiler`.  It
sends one job per worker first (the per-job cost), then batches sized by
:func:`batch_size`; each batch must come back within :func:`batch_deadline`.  What
comes back is checked (:mod:`pipeline.compile.farm_trust`): accepted results are handed
on at once, or held until the audit when one is asked for; a worker's failures are
kept to be confirmed here.  :meth:`FarmRun.finish` audits, delivers what it held
from workers still trusted, and compiles on this machine every job the farm did not
deliver (failures to confirm first), through the local :class:`JobRunner`.
"""

from __future__ import annotations

import math
import time
from collections import deque
from concurrent.futures import CancelledError
from typing import Protocol

import msgspec
from distributed import Client, KilledWorker, wait

from pipeline.compilers import CompileOutput, SourceTree
from pipeline.compile.farm_trust import Trust, audit_sample, batch_problem, job_output
from pipeline.compile.farm_worker import BatchFailure, CompilerMismatch, FarmBatch, farm_task
from pipeline.compile.scheduler import JobRunner, batch_of
from pipeline.plan.jobs import StageJob
from pipeline.errors import one_line
from pipeline.compilers.reflect import ReflectionError, reflect


OVERHEAD_SHARE = 0.05      # scheduling overhead per batch, at most this share of its compile time
MAX_BATCH = 64
IN_FLIGHT_PER_WORKER = 2   # batches queued per worker: one running, one arriving
MAX_REFUSALS = 8           # refused sends of one batch before it compiles here
BATCH_TIMEOUT = 120.0      # seconds a batch may take at least before it is given up on its worker
TIMEOUT_FACTOR = 20        # ... else this many times its measured compile time (queueing included)
LOST_AFTER = 5.0           # seconds without a connection to the scheduler before the farm is given up
FARM_ATTEMPTS = 2          # sends of one batch to the farm before it compiles here


class FarmLost(RuntimeError):
    """The farm became unusable after it started; the cook goes on here."""


class FarmStats(msgspec.Struct):
    """What a farm run measured; ``to_json()`` is ``pipeline cook --json``'s ``farm``."""

    scheduler: str
    workers: int = 0
    refused_workers: dict[str, str] = msgspec.field(default_factory=dict)  # address -> its compiler identity
    overhead_ms: float = 0.0       # median round trip of an empty task
    per_job_ms: float = 0.0        # mean compile time of one job on a worker
    batches: int = 0
    batch_sizes: list[int] = msgspec.field(default_factory=list)
    resent: int = 0                # batches sent again (refused, failed, timed out)
    compile_s: float = 0.0         # sum of worker compile time
    wall_s: float = 0.0            # from the first send to the last result
    startup_s: float = 0.0         # cluster start or connect, identity check, overhead probes
    compiled_here: int = 0         # jobs the farm was given that compiled on this machine instead
    audited: int = 0               # farm results recompiled here and compared
    banned_workers: dict[str, str] = msgspec.field(default_factory=dict)  # address -> why it got no more jobs

    def to_json(self) -> dict:
        sizes = self.batch_sizes
        return {"scheduler": self.scheduler, "workers": self.workers, "refused_workers": self.refused_workers,
                "overhead_ms": round(self.overhead_ms, 3), "per_job_ms": round(self.per_job_ms, 3),
                "batches": self.batches, "max_batch": max(sizes, default=0),
                "mean_batch": round(sum(sizes) / len(sizes), 2) if sizes else 0, "resent": self.resent,
                "compile_s": round(self.compile_s, 4), "wall_s": round(self.wall_s, 4),
                "startup_s": round(self.startup_s, 4), "overhead_share": round(self.overhead_share, 4),
                "compiled_here": self.compiled_here, "audited": self.audited,
                "banned_workers": dict(sorted(self.banned_workers.items()))}

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


def batch_deadline(floor: float, per_job_s: float | None, size: int) -> float:
    """Seconds a batch of ``size`` jobs may take on the farm, queueing behind another batch included."""
    measured = TIMEOUT_FACTOR * (per_job_s or 0.0) * size * IN_FLIGHT_PER_WORKER
    return max(floor, measured)


class Farm(Protocol):
    """What a run reads and updates of the compiler it runs for (:class:`~pipeline.compile.farm.FarmCompiler`)."""

    scheduler: str
    audit: float
    batch_timeout: float
    tree: SourceTree
    local: JobRunner
    trust: Trust
    stats: FarmStats
    notes: list[str]
    calls: int
    reflector: str | None  # the SPIRV-Cross revision batches name (their workers' reflections are by it)

    def farm_batch(self, jobs: list[StageJob]) -> FarmBatch: ...


class Sent(msgspec.Struct):
    jobs: list[StageJob]
    attempts: int       # sends of these jobs to the farm so far
    refusals: int
    deadline: float     # time.monotonic() by which the batch must be back
    workers: tuple[str, ...] = ()  # where it may run


class FarmRun:
    """One farm run: sends batches, sizes them from what finished, checks and delivers results; then
    compiles here what the farm did not deliver (or what a failed audit took back)."""

    def __init__(self, farm: Farm, client: Client, jobs: list[StageJob], on_done, fail_fast: bool):
        self.farm, self.client, self.jobs, self.on_done, self.fail_fast = farm, client, jobs, on_done, fail_fast
        self.stats, self.trust = farm.stats, farm.trust
        self.queue: deque[StageJob] = deque(jobs)
        self.in_flight: dict = {}                      # future -> Sent
        self.good: list[str] = []
        self.overhead = 0.0
        self.done_jobs = 0
        self.per_job: float | None = None
        self.delivered: set[str] = set()
        self.held: list[tuple[StageJob, CompileOutput, str]] = []  # accepted, waiting for the audit
        self.confirm: dict[str, str] = {}              # job key -> worker that reported it failing
        self.here: list[StageJob] = []                 # to compile on this machine
        self.stop = False
        self.connected = time.monotonic()              # when the client was last seen connected
        self.pruned = time.monotonic()                 # when the workers were last checked
        self.lost_with_workers: list[StageJob] = []    # jobs of batches whose workers died running them
        self.unreadable = ""                           # the first answer that could not be read

    # ---------------------------------------------------------- farm phase
    def go(self, good: list[str], overhead: float) -> None:
        """Send every job to the farm and take what comes back, until nothing is in flight."""
        self.good, self.overhead = list(good), overhead
        started = time.perf_counter()
        try:
            for _ in self.good[:len(self.queue)]:  # first round: one job per worker measures the per-job cost
                self._send(1)
            while self.in_flight:
                for future in self._wait():
                    self._receive(future, self.in_flight.pop(future))
                self._expire()
                self._prune()
                self._refill()
        finally:
            self.stats.wall_s = time.perf_counter() - started

    def _refill(self) -> None:
        while not self.stop and self.queue and self.good \
                and len(self.in_flight) < len(self.good) * IN_FLIGHT_PER_WORKER:
            self._send(batch_size(self.overhead, self.per_job, len(self.queue), len(self.good)))

    def _send(self, size: int, batch: list[StageJob] | None = None, attempts: int = 0, refusals: int = 0) -> None:
        if batch is None:
            batch = [self.queue.popleft() for _ in range(min(size, len(self.queue)))]
            self.stats.batches += 1
            self.stats.batch_sizes.append(len(batch))
        else:
            self.stats.resent += 1
        future = self.client.submit(farm_task, self.farm.farm_batch(batch), pure=False,
                                    workers=list(self.good), allow_other_workers=False)
        limit = batch_deadline(self.farm.batch_timeout, self.per_job, len(batch))
        self.in_flight[future] = Sent(batch, attempts + 1, refusals, time.monotonic() + limit, tuple(self.good))

    def _retry(self, sent: Sent) -> None:
        """Send a batch to the farm again, or compile it here once it had its attempts."""
        if sent.attempts < FARM_ATTEMPTS and self.good and not self.stop:
            self._send(0, sent.jobs, sent.attempts, sent.refusals)
        else:
            self.here += sent.jobs

    def _wait(self) -> list:
        """The futures done within the earliest deadline, or a second (none when nothing finished).
        A client that has not been connected for :data:`LOST_AFTER` seconds has lost the farm."""
        if self.client.status == "running":
            self.connected = time.monotonic()
        elif time.monotonic() - self.connected > LOST_AFTER:
            raise ConnectionError(f"no connection to the scheduler for {LOST_AFTER:.0f} s")
        timeout = min(min(s.deadline for s in self.in_flight.values()) - time.monotonic(), 1.0)
        try:
            done, _ = wait(list(self.in_flight), timeout=max(timeout, 0.01), return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        return [f for f in done if f in self.in_flight]

    def _expire(self) -> None:
        """Batches past their deadline: their worker is given up, the batch sent elsewhere or kept here."""
        now = time.monotonic()
        late = [f for f, s in self.in_flight.items() if s.deadline <= now]
        if not late:
            return
        holding = {key: worker for worker, keys in self.client.processing().items() for key in keys}
        for future in late:
            sent = self.in_flight.pop(future, None)
            if sent is None:
                continue
            worker = holding.get(future.key)
            if worker is not None:
                self._ban(worker, f"did not answer a batch of {len(sent.jobs)} jobs in time")
            future.cancel()
            self._retry(sent)
        for future, sent in list(self.in_flight.items()):  # what the given-up workers still hold
            if holding.get(future.key) in self.trust.banned:
                del self.in_flight[future]
                future.cancel()
                self._retry(sent)

    def _prune(self) -> None:
        """Workers that left the cluster get no more batches; a batch that may only run on them is sent
        elsewhere.  None left: the farm is lost."""
        now = time.monotonic()
        if now - self.pruned < 1.0:
            return
        self.pruned = now
        alive = set(self.client.scheduler_info(n_workers=-1).get("workers", {}))
        self.good = [w for w in self.good if w in alive]
        if not self.good and (self.queue or self.in_flight):
            raise FarmLost("every worker this cook used has left the cluster")
        for future, sent in list(self.in_flight.items()):
            if sent.workers and not alive.intersection(sent.workers):
                del self.in_flight[future]
                future.cancel()
                self._retry(sent)

    def _ban(self, worker: str, why: str) -> None:
        self.trust.ban(worker, why)
        self.stats.banned_workers.setdefault(worker, why)
        if worker in self.good:
            self.good.remove(worker)

    def _receive(self, future, sent: Sent) -> None:
        try:
            result = future.result()
        except CompilerMismatch as exc:
            if sent.refusals + 1 >= MAX_REFUSALS:
                self.farm.notes.append(f"{self.farm.scheduler}: workers keep refusing jobs ({one_line(str(exc))}); "
                                       f"{len(sent.jobs)} jobs compile on this machine")
                self.here += sent.jobs
            else:
                self._send(0, sent.jobs, sent.attempts - 1, sent.refusals + 1)
            return
        except KilledWorker:
            self.lost_with_workers += sent.jobs  # one warning at the end, however many batches
            self.here += sent.jobs
            return
        except CancelledError:
            raise  # the scheduler cancelled the work: the farm is lost
        except Exception as exc:  # noqa: BLE001 - this batch only (its answer could not be read): send it again
            self.unreadable = self.unreadable or f"{type(exc).__name__}: {one_line(str(exc))}"
            self._retry(sent)
            return
        if isinstance(result, BatchFailure):
            self._ban(str(result.worker), f"failed a batch ({one_line(result.message)})")
            self._retry(sent)
            return
        problem = batch_problem(result, sent.jobs)
        if problem is not None:
            self._ban(self._holder(future), problem)
            self._retry(sent)
            return
        self._accept(sent.jobs, result)

    def _holder(self, future) -> str:
        """The worker holding a finished task's result (the scheduler's word, not the result's)."""
        try:
            return next(iter(self.client.who_has([future]).get(future.key, ())), self.farm.scheduler)
        except Exception:  # noqa: BLE001 - only to name it
            return self.farm.scheduler

    def _accept(self, batch: list[StageJob], result) -> None:
        worker = result.worker
        if worker in self.trust.banned:  # caught since it was sent this batch
            self.here += batch
            return
        checked = [(job, *job_output(job, result.results, reflector=self.farm.reflector)) for job in batch]
        wrong = [why for _, output, why in checked if output is None]
        if wrong:
            self._ban(worker, wrong[0])
            self.here += batch
            return
        if isinstance(result.seconds, (int, float)):
            self.stats.compile_s += result.seconds
            self.done_jobs += len(batch)
            self.per_job = self.stats.compile_s / self.done_jobs
            self.stats.per_job_ms = self.per_job * 1000
        with batch_of(self.on_done):  # the batch's records in one store commit
            for job, output, _ in checked:
                if output.spirv is None:  # a farm's failure is confirmed here, never remembered as it came
                    self.confirm[job.key] = worker
                    self.stop = self.stop or self.fail_fast
                elif self.farm.audit:
                    self.held.append((job, output, worker))
                else:
                    self._deliver(job, output, worker)

    def _deliver(self, job: StageJob, output: CompileOutput, where: str) -> None:
        self.farm.calls += 1
        self.delivered.add(job.key)
        self.on_done(job, output, where=where)

    # ---------------------------------------------------------- after the farm
    def finish(self) -> list[str]:
        """Audit the held results, deliver the trusted ones, compile here the rest; the cancelled keys."""
        if self.unreadable:
            self.farm.notes.append(f"{self.farm.scheduler}: a farm batch's answer could not be read "
                                   f"({self.unreadable}); it was sent again or compiled here")
        if self.lost_with_workers:
            self.farm.notes.append(f"{self.farm.scheduler}: farm workers died running {len(self.lost_with_workers)} "
                                   f"jobs; they compile on this machine")
        mine = self._audit()
        for job, output, worker in self.held:
            if worker not in self.trust.banned:
                self._deliver(job, output, worker)
            elif job.key in mine:  # compiled here for the audit already
                self._deliver(job, mine[job.key], "local")
        first = sorted((j for j in self.jobs if j.key in self.confirm), key=lambda j: j.key)
        leftover = first + [j for j in self.jobs if j.key not in self.delivered and j.key not in self.confirm]
        self.stats.compiled_here = len(leftover)

        def here(job: StageJob, output: CompileOutput) -> None:
            worker = self.confirm.get(job.key)
            if worker is not None and output.spirv is not None:
                why = f"reported a compile failure for job {job.key[:12]} that compiles here"
                self.trust.ban(worker, why, "no failure it reported is remembered")
                self.stats.banned_workers.setdefault(worker, why)
            self._deliver(job, output, "local")

        cancelled = self.farm.local.run(leftover, here, self.fail_fast) if leftover else []
        return sorted(set(cancelled) | ({j.key for j in self.jobs} - self.delivered))

    def _audit(self) -> dict[str, CompileOutput]:
        """Recompile a seeded share of the held farm results here; a worker whose bytes differ is caught.
        Returns this machine's outputs of the audited jobs."""
        if not self.held:
            return {}
        chosen = audit_sample([job.key for job, _, _ in self.held], self.farm.audit)
        held = {job.key: (job, output, worker) for job, output, worker in self.held}
        mine: dict[str, CompileOutput] = {}
        self.farm.local.run([held[k][0] for k in sorted(chosen)],
                            lambda job, output: mine.__setitem__(job.key, output))
        self.stats.audited = len(mine)
        wrong: dict[str, list[StageJob]] = {}
        for key in sorted(mine):
            job, output, worker = held[key]
            if mine[key].spirv != output.spirv or not _same_reflection(output):
                wrong.setdefault(worker, []).append(job)
        for worker, jobs in sorted(wrong.items()):
            audited = sum(1 for k in mine if held[k][2] == worker)
            self.trust.audit_failed(worker, jobs, audited, self.farm.tree.name(jobs[0].request.source))
            self.stats.banned_workers.setdefault(worker, f"failed the audit on job {jobs[0].key[:12]}")
        return mine


def _same_reflection(output: CompileOutput) -> bool:
    """Whether the reflection a worker sent with ``output`` (if any) is this machine's of the same blob."""
    if output.reflection is None:
        return True
    try:
        return reflect(output.spirv) == output.reflection[1]
    except ReflectionError:
        return True  # nothing to compare with here: the outputs reflect (or report) the blob themselves
