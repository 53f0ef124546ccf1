"""Process pools that never outlive or hang their parent.

Both pools of the pipeline (the scan pool and the compile pool) are made by
:func:`process_pool`:

- **Workers die with their parent.**  Each worker asks Linux for a parent-death
  signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), so a ``kill -9`` of the cook takes
  its workers along instead of leaving them holding the pool's pipes.  Where that
  call does not exist, a daemon thread in the worker polls the parent's pid and
  ends the worker when the parent is gone.
- **Ctrl-C is the parent's business.**  Workers ignore SIGINT (a terminal sends it
  to the whole process group), so an interrupt prints no worker tracebacks.  They
  are born with SIGINT blocked (the parent blocks it while it submits, which is
  when the pool forks) and unblock it only once it is ignored, so a Ctrl-C landing
  while a worker starts cannot kill it and break the pool.  The
  parent, on any exception (KeyboardInterrupt included), kills its workers and
  shuts the pool down without waiting, so the interrupt can never deadlock in the
  pool's shutdown.  Results already stored stay stored.  A worker killed while it
  was sending a result leaves half a message in the result pipe; the pool's own
  reader thread would wait for the rest forever (and the interpreter's exit with
  it), so once the workers are gone the parent closes its end of that pipe and the
  reader sees the end of the stream instead.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator

PR_SET_PDEATHSIG = 1
WATCH_INTERVAL = 0.5  # seconds between parent checks where there is no parent-death signal
MAX_TASK_CHUNKS = 8  # chunks per task of a forked pool: the cook holds a task's results whole while it takes them in


def fork_context():
    """fork where there is one (workers start at once and inherit the loaded modules), else None.

    The process-pool machinery (``multiprocessing``, ``concurrent.futures.process``) is imported here
    and in :func:`process_pool`, when a pool is about to start: a cook that needs none (one chunk, every
    job cached) does not pay for it."""
    import multiprocessing
    try:
        return multiprocessing.get_context("fork")
    except ValueError:
        return None


@contextlib.contextmanager
def process_pool(max_workers: int, *, mp_context=None, initializer: Callable | None = None,
                 initargs: tuple = ()) -> Iterator[cf.ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` whose workers die with this process and that an exception never hangs."""
    import multiprocessing
    method = (mp_context or multiprocessing.get_context()).get_start_method()
    parent = os.getpid() if method in ("fork", "spawn") else None  # forkserver: the server is the parent
    pool = _pool_class()(max_workers=max_workers, mp_context=mp_context, initializer=_init_worker,
                         initargs=(parent, initializer, initargs))
    try:
        yield pool
    except BaseException:
        kill_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


@functools.cache
def _pool_class() -> type:
    """``ProcessPoolExecutor`` whose workers are forked with SIGINT blocked (made on first use)."""
    class Pool(cf.ProcessPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            with _sigint_blocked():  # workers are forked here, and inherit the mask
                return super().submit(fn, *args, **kwargs)
    return Pool


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """SIGKILL every worker process of ``pool`` (they hold no state worth keeping)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            process.kill()
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)
    if processes and not any(p.is_alive() for p in processes):
        # The parent holds the last writing end of the result pipe: closing it turns a
        # half-sent result into end-of-stream for the pool's reader thread.
        with contextlib.suppress(Exception):
            pool._result_queue._writer.close()


def _init_worker(expected: int | None, initializer: Callable | None, initargs: tuple) -> None:
    """``expected``: the pid of the process that made the pool when it forks or spawns its workers
    itself (a fork server, which ends with that process, is the parent otherwise)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since the fork (see _pool_class)
    parent = os.getppid()
    if not _parent_death_signal():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="parent-watch").start()
    orphan = parent != expected if expected is not None else parent == 1
    if orphan or os.getppid() != parent:
        os._exit(1)  # the parent died before the signal was armed (this worker was handed to a reaper)
    if initializer is not None:
        initializer(*initargs)


def _parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; False where there is no such call."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL)
    os._exit(1)
