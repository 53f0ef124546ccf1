"""The build farm: compile a cook's cache misses on a Dask cluster.

``--scheduler tcp://HOST:8786`` connects to a running Dask scheduler (its workers
need this package and the same compiler wheels installed); ``--scheduler local:N``
starts a Dask ``LocalCluster`` of N worker processes for this cook only (started
when the first job needs it, so a cook with nothing to compile starts nothing).

:class:`FarmCompiler` has the interface of :class:`~pipeline.compile.scheduler.JobRunner`
(``run(jobs, on_done, fail_fast)``), so the scheduler's cache lookup, reasons,
progress and storing are the same for a local and a farm cook.  What differs:

- Jobs travel as data (:mod:`pipeline.compile.farm_worker`): the request and the
  text of its source closure, never a path.  The client reads each file once and
  checks it still has the content hash its job key was made with.
- Compiler identity: before sending anything, every worker reports its compiler
  identity (loading the compiler, so first jobs do not pay for it).  Workers with
  another identity get no jobs; should one receive a batch anyway it refuses it
  and the batch goes elsewhere.  No worker with the right compiler: a
  :class:`FarmError` naming both identities.
- Trust: workers run spirv-val; the client checks each result's shape, digest,
  stage and entry point, confirms every failure by compiling the job here, and
  with ``audit`` recompiles a share of the results here and compares the bytes
  (:mod:`pipeline.compile.farm_trust`).  A worker caught gets no more jobs; what it
  sent is compiled here.  The cache and outputs are written here only, so outputs
  are byte-identical to a local cook's.
- Failures: a batch that raises, or does not come back within its timeout
  (:data:`~pipeline.compile.farm_run.TIMEOUT_FACTOR` times its measured compile time,
  at least ``[farm] batch_timeout``), is sent to another worker once, then compiled
  here; its worker gets no more jobs.  A batch whose workers died running it (Dask
  retries it on others up to ``distributed.scheduler.allowed-failures`` times) is
  compiled here.  A farm lost after it started (the
  scheduler gone, every worker gone) is one warning: the jobs it did not finish
  compile here.  Only a scheduler that cannot be reached, or no worker with the
  jobs' compiler, stops the cook (a :class:`FarmError`).
- Interrupts: a ``local:N`` cluster's worker processes ignore SIGINT (a terminal's
  Ctrl-C reaches the whole process group): the cook alone answers it, and closes
  the cluster without tracebacks.  A Ctrl-C in the second it takes to start the
  cluster's processes is ignored by the cook too.
- Batching: the scheduling overhead is measured first (round trips of an empty
  task), then one job per worker measures the per-job compile cost; later batches
  hold enough jobs that the overhead stays under :data:`OVERHEAD_SHARE` of the
  batch's compile time, capped so every worker stays fed until the end.
  :class:`FarmStats` reports what was measured (``pipeline cook --json``: ``farm``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import signal
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError

import dask.config
from distributed import Client, LocalCluster

from pipeline.compilers import SourceTree
from pipeline.compile.farm_address import LOCAL_PREFIX, FarmError, check_audit, local_workers, parse_scheduler
from pipeline.compile.farm_run import BATCH_TIMEOUT, FarmLost, FarmRun, FarmStats, batch_size
from pipeline.compile.farm_trust import Trust
from pipeline.compile.farm_worker import FarmBatch, FarmJob, noop, worker_identity
from pipeline.plan.jobs import StageJob
from pipeline.compile.scheduler import JobRunner
from pipeline.errors import one_line
from pipeline.compilers.reflect import ReflectionError, tool_version

__all__ = ["FarmCompiler", "FarmConnection", "FarmError", "FarmStats", "LOCAL_HTTP", "LOCAL_PREFIX", "batch_size",
           "parse_scheduler"]

CONNECT_TIMEOUT = 30.0     # seconds to reach a scheduler and see a worker
OVERHEAD_PROBES = 5        # empty round trips timed before the first batch
CLOSE_TIMEOUT = 10.0       # seconds to close the client and a local cluster
# No dashboard; the scheduler's health endpoint on a free loopback port (its default, 8787, may be taken).
LOCAL_HTTP = {"dashboard_address": "127.0.0.1:0", "scheduler_kwargs": {"dashboard": False}}


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while worker processes start: they inherit the disposition (a mask is not
    inherited through spawn), so a terminal's Ctrl-C, sent to the whole process group, reaches the
    cook alone.  Workers a nanny restarts later ignore it through :func:`farm_worker.dask_setup`."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: the caller owns signals
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class FarmConnection:
    """One cook's way to the farm: the Dask client (and a ``local:N`` cluster), made when first asked for
    and kept until :meth:`close`, so a cook's chunk work (:mod:`pipeline.compile.farm_chunks`) and its
    compiles share one cluster and one start."""

    def __init__(self, scheduler: str, connect_timeout: float = CONNECT_TIMEOUT):
        self.scheduler, self.connect_timeout = scheduler, connect_timeout
        self.kind, self.address = parse_scheduler(scheduler)
        self.notes: list[str] = []
        if self.kind == "local":
            self.address, warning = local_workers(int(self.address))
            self.notes += [warning] if warning else []
        self._client: Client | None = None
        self._cluster: LocalCluster | None = None
        self._quiet = contextlib.ExitStack()  # Dask's own log lines stay out of the cook's while it is connected
        self.startup_s = 0.0  # the cluster's start or the connection, when it was made

    @property
    def connected(self) -> bool:
        return self._client is not None

    def client(self) -> Client:
        """The client, connecting (or starting the local cluster) on first use; a FarmError when it cannot."""
        if self._client is None:
            began = time.perf_counter()
            self._quiet.enter_context(quiet_dask())
            cluster = None
            try:
                if self.kind == "local":
                    preload = [*dask.config.get("distributed.worker.preload", []), "pipeline.compile.farm_worker"]
                    with sigint_ignored():  # the worker processes never see a Ctrl-C
                        cluster = LocalCluster(n_workers=self.address, threads_per_worker=1, processes=True,
                                               silence_logs=logging.CRITICAL, preload=preload, **LOCAL_HTTP)
                    client = Client(cluster, timeout=self.connect_timeout)
                else:
                    client = Client(self.address, timeout=self.connect_timeout)
                client.wait_for_workers(1, timeout=self.connect_timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                _close(None, cluster)
                self._quiet.close()
                raise FarmError.about(self.scheduler, f"cannot use the Dask scheduler: {one_line(str(exc))}") from None
            self._client, self._cluster = client, cluster
            self.startup_s = time.perf_counter() - began
        return self._client

    def close(self) -> None:
        """Close the client and a local cluster (quietly: a farm lost makes Dask log its reconnects)."""
        try:
            _close(self._client, self._cluster)
        finally:
            self._client = self._cluster = None
            self._quiet.close()


class FarmCompiler:
    """Compiles stage jobs on a Dask cluster; the scheduler's seam, like ``JobRunner``.  ``connection``: the
    cook's (shared with its chunk work, closed by the cook), else one of its own for each run."""

    def __init__(self, scheduler: str, tree: SourceTree, backend: str, identity: str, *,
                 connect_timeout: float = CONNECT_TIMEOUT, audit: float = 0.0,
                 batch_timeout: float | None = None, local: JobRunner | None = None,
                 connection: FarmConnection | None = None):
        self._owned = connection is None  # a connection of its own: made for each run, closed after it
        self.connection = connection or FarmConnection(scheduler, connect_timeout)
        self.kind, self.address, self.notes = self.connection.kind, self.connection.address, list(self.connection.notes)
        self.audit = check_audit(audit)
        self.batch_timeout = BATCH_TIMEOUT if batch_timeout is None else batch_timeout
        self.connect_timeout = connect_timeout
        self.scheduler = scheduler
        self.tree = tree
        self.library = tree.named_root  # how diagnostics name the shader library's files
        self.backend = backend
        self.identity = identity
        self.local = local or JobRunner(tree.root, backend, None, tree.allowed[1:])
        self.trust = Trust()
        self.calls = 0
        self.stats = FarmStats(scheduler)
        self.on_started: Callable[[Client], None] | None = None  # tests: act on the live cluster

    @property
    def warnings(self) -> list[str]:
        """What the cook should say about the farm (bounded cluster, workers caught, a farm lost)."""
        return self.notes + self.trust.warnings

    @property
    def errors(self) -> list:
        """Audit failures: located at the worker, naming the job."""
        return list(self.trust.errors)

    # ------------------------------------------------------------ cluster
    def _check_workers(self, client: Client) -> list[str]:
        """Addresses of workers whose compiler is ours; the others are recorded as refused."""
        found = client.run(worker_identity, self.backend, on_error="return")
        good = sorted(a for a, ident in found.items() if ident == self.identity)
        self.stats.refused_workers = {a: one_line(str(ident)) for a, ident in sorted(found.items())
                                      if ident != self.identity and isinstance(ident, str)}
        if not good and len(self.stats.refused_workers) < len(found):  # workers died or failed to answer
            lost = "; ".join(f"{a}: {one_line(repr(e))}" for a, e in sorted(found.items()) if not isinstance(e, str))
            raise FarmLost(f"no worker answered: {lost}")
        if not good:
            seen = "; ".join(f"{a}: {i}" for a, i in self.stats.refused_workers.items())
            raise FarmError.about(self.scheduler, f"no worker has the compiler the jobs need "
                                                  f"({self.identity}); workers have: {seen}")
        return good

    def _measure_overhead(self, client: Client, good: list[str]) -> float:
        latencies = []
        for i in range(OVERHEAD_PROBES):
            began = time.perf_counter()
            client.submit(noop, i, pure=False, workers=good).result(timeout=self.connect_timeout)
            latencies.append(time.perf_counter() - began)
        return statistics.median(latencies)

    # ------------------------------------------------------------ run
    def run(self, jobs: list[StageJob], on_done, fail_fast: bool = False) -> list[str]:
        """Compile ``jobs`` on the farm, and here what it did not deliver; ``on_done(job, output, where)``
        per job; returns the keys a fail-fast stop cancelled."""
        if not jobs:
            return []
        with quiet_dask():
            return self._run(jobs, on_done, fail_fast)

    def _run(self, jobs: list[StageJob], on_done, fail_fast: bool) -> list[str]:
        began = time.perf_counter()
        client = self.connection.client()
        state = FarmRun(self, client, jobs, on_done, fail_fast)
        try:
            good = self._check_workers(client)
            self.stats.workers = len(good)
            overhead = self._measure_overhead(client, good)
            self.stats.overhead_ms = overhead * 1000
            self.stats.startup_s = time.perf_counter() - began
            if self.on_started is not None:
                self.on_started(client)
            state.go(good, overhead)
        except FarmError:
            raise
        except Exception as exc:  # noqa: BLE001 - the farm broke: what it did not deliver compiles here
            self.notes.append(f"{self.scheduler}: the build farm failed ({_why(exc)}); "
                              f"the jobs it did not finish compile on this machine")
            self.connection.close()  # broken: the cook's is closed now too
        finally:
            if self._owned:
                self.connection.close()
        return state.finish()

    def farm_batch(self, jobs: list[StageJob]) -> FarmBatch:
        """The data sent for ``jobs``: requests, closures and the text of every file they read."""
        files: dict[str, str] = {}
        for job in jobs:
            for rel, sha in job.closure:
                if sha not in files:
                    parsed = self.tree.parsed(rel)
                    if parsed.sha256 != sha:
                        raise FarmError.about(self.tree.name(rel), "changed during the cook; cook again")
                    files[sha] = parsed.text
        return FarmBatch(tuple(FarmJob(j.key, j.request, j.closure) for j in jobs), files, self.backend,
                         self.identity, self.library, self.reflector)

    @functools.cached_property
    def reflector(self) -> str | None:
        """This machine's SPIRV-Cross revision, which a worker's must be to reflect the blobs it sends (None:
        no SPIRV-Cross here, so nothing is reflected)."""
        try:
            return tool_version()
        except (ReflectionError, OSError):
            return None


def _why(exc: Exception) -> str:
    """A farm failure in a few words: Dask's messages run over many lines."""
    if isinstance(exc, FarmLost):
        return one_line(str(exc))
    if isinstance(exc, CancelledError) or (isinstance(exc, OSError) and not isinstance(exc, TimeoutError)):
        return "lost the connection to the scheduler"
    first = (str(exc).strip().splitlines() or [""])[0]
    return one_line(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


_QUIET: dict[logging.Logger, bool] = {}  # Dask's loggers silenced, each with its state before
_QUIET_DEPTH = [0]


@contextlib.contextmanager
def quiet_dask() -> Iterator[None]:
    """Dask's own log lines (reconnect attempts, lost workers, tracebacks) stay out of the cook's output:
    what matters reaches the cook as a warning or an error.  Nested or overlapping uses (a cook's
    connection, open across its chunk work and compiles, and a farm run inside it) give every logger
    back as it was when the first began, once the last ends, whatever the order they end in."""
    for name in ["distributed", *logging.Logger.manager.loggerDict]:
        if name == "distributed" or name.startswith("distributed."):
            logger = logging.getLogger(name)
            if logger not in _QUIET:  # one made since an outer use began is silenced too
                _QUIET[logger] = logger.disabled
                logger.disabled = True
    _QUIET_DEPTH[0] += 1
    try:
        yield
    finally:
        _QUIET_DEPTH[0] -= 1
        if _QUIET_DEPTH[0] == 0:
            for logger, disabled in _QUIET.items():
                logger.disabled = disabled
            _QUIET.clear()


def _close(client: Client | None, cluster: LocalCluster | None) -> None:
    """Close the client and a local cluster, quietly and within :data:`CLOSE_TIMEOUT` each."""
    for part in (client, cluster):
        if part is not None:
            with contextlib.suppress(Exception):
                part.close(timeout=CLOSE_TIMEOUT)


