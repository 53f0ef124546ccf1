"""What a build-farm worker runs: compile jobs that carry their sources as data.

A job sent to a Dask worker reads no path of the machine that planned it.  A
:class:`FarmBatch` carries, for each job, the compile request (source name,
stage, language, entry, projected defines, target, optimize flag) and the
stage's source closure as ``(relpath, sha256)`` pairs, plus the text of every
file those closures name, once per batch and keyed by content hash.  It also
names the backend and the compiler identity the job keys were made with, and the
client's shader library folder, only as the name its diagnostics give files.

The worker:

1. checks that its compiler is the one the jobs name: another glslang or
   SPIRV-Tools version could give other bytes under the same job key, so it
   refuses the whole batch with :class:`CompilerMismatch` (the client then
   sends the batch to another worker, or stops with a clear error);
2. checks every file's text against its content hash;
3. rebuilds each job's source tree in memory (:class:`MemoryTree`: includes
   resolve exactly as in :class:`~pipeline.compilers.SourceTree`, errors name
   files under the client's shader library folder, as the client's own compiles
   would) and compiles with
   :func:`~pipeline.compilers.compile_one`, the function the local process
   pool runs (compile, optimize when asked, spirv-val: the worker validates what
   it sends);
4. reflects each SPIR-V blob with SPIRV-Cross when its revision is the one the client names
   (:attr:`FarmBatch.reflector`), so the client's outputs find the reflection stored and reflect
   no blob themselves (about 0.6 ms CPU a blob in process, 4 ms where only the command is installed);
5. returns SPIR-V, its SHA-256, the reflection, diagnostics and the time spent per job.

The task a client submits is :func:`farm_task`: an exception inside the batch
comes back as a :class:`BatchFailure` naming this worker, not as a bare error.
The client trusts nothing it receives (:mod:`pipeline.compile.farm_trust`): it checks
each result's shape, digest, stage and entry point, and writes the cache and
outputs itself, so a farm cook's outputs are byte-identical to a local one's.
Every function here is top-level and every value a plain msgspec struct: Dask ships
them to workers by reference to this module, which workers import from the same
installed package.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import msgspec

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend
from pipeline.compilers.sources import ParsedFile, parse_source
from pipeline.digest import bytes_hash
from pipeline.errors import CompileError, Diagnostic
from pipeline.compilers.reflect import SPIRV_MAGIC, ReflectionError, reflect, tool_version


class CompilerMismatch(RuntimeError):
    """A worker's compiler is not the one a job was keyed with; the worker refuses the job."""


class TransferError(RuntimeError):
    """A source file's text does not match the content hash its job names."""


class FarmJob(msgspec.Struct, frozen=True):
    """One stage job: its cache key, the request and its source closure by content hash."""

    key: str
    request: CompileRequest
    closure: tuple[tuple[str, str], ...]  # (relpath, sha256) of the source and its includes


class FarmBatch(msgspec.Struct, frozen=True):
    """Jobs sent to one worker in one task, with the text of every file they read."""

    jobs: tuple[FarmJob, ...]
    files: dict[str, str]  # sha256 -> text
    backend: str           # 'capi' or 'cli'
    compiler: str          # the backend identity the job keys were made with
    library: str           # the client's shader library folder: diagnostics name its files under it
    reflector: str | None = None  # the client's SPIRV-Cross revision: a worker with it reflects the blobs


class FarmResult(msgspec.Struct, frozen=True):
    """What one job produced on a worker."""

    key: str
    spirv: bytes | None
    digest: str | None
    diagnostics: tuple[Diagnostic, ...]
    seconds: float
    reflection: dict | None = None  # the blob's reflection, by the client's SPIRV-Cross revision


class BatchResult(msgspec.Struct, frozen=True):
    """A finished batch: where it ran and what each job produced."""

    worker: str
    pid: int
    results: tuple[FarmResult, ...]
    seconds: float  # compile time inside the worker, the whole batch


class BatchFailure(msgspec.Struct, frozen=True):
    """A batch that raised on a worker: where, and the exception as one line."""

    worker: str
    pid: int
    message: str


class MemoryTree(SourceTree):
    """A source tree held in memory: root-relative path -> text (a job's source closure)."""

    def __init__(self, files: dict[str, str], library: str):
        super().__init__(Path("/"), named_root=library)
        self._texts = dict(files)
        self._parsed: dict[str, ParsedFile] = {}

    def has_file(self, relpath: str) -> bool:
        return relpath in self._texts

    def parsed(self, relpath: str) -> ParsedFile:
        if relpath not in self._parsed:
            if relpath not in self._texts:
                raise CompileError.at(self.name(relpath), "shader source not sent with the job")
            self._parsed[relpath] = parse_source(self._texts[relpath])
        return self._parsed[relpath]


def worker_address() -> str:
    """The Dask address of the worker running this code, or ``'local'`` outside a worker."""
    try:
        from distributed import get_worker  # only present where Dask runs this module
        return get_worker().address
    except (ImportError, ValueError):
        return "local"


def worker_identity(backend: str) -> str:
    """This process's compiler identity for ``backend``; loads the compiler (a warm-up)."""
    return get_backend(backend).identity


def check_files(files: dict[str, str]) -> None:
    """Every text must hash to its key; raises :class:`TransferError` otherwise."""
    for digest, text in files.items():
        if bytes_hash(text.encode("utf-8")) != digest:
            raise TransferError(f"source text {digest[:12]} does not match its hash")


def compile_farm_batch(batch: FarmBatch) -> BatchResult:
    """Compile a batch in this worker process; refuses it when the compiler differs."""
    backend = get_backend(batch.backend)
    if backend.identity != batch.compiler:
        raise CompilerMismatch(f"worker {worker_address()} has compiler {backend.identity!r}; "
                               f"the jobs were keyed for {batch.compiler!r}")
    check_files(batch.files)
    with tempfile.TemporaryDirectory(prefix="pipeline-farm-") as scratch:
        trees: dict[tuple, SourceTree] = {}
        results = []
        start = time.perf_counter()
        for job in batch.jobs:
            if job.closure not in trees:
                trees[job.closure] = _tree(job, batch, Path(scratch) / str(len(trees)))
            began = time.perf_counter()
            output = compile_one(job.request, trees[job.closure], backend)
            digest = bytes_hash(output.spirv) if output.spirv is not None else None
            seconds = time.perf_counter() - began  # the compile's own: the reflection is not the timing log's
            results.append(FarmResult(job.key, output.spirv, digest, tuple(output.diagnostics), seconds,
                                      reflected(output.spirv, batch.reflector)))
        return BatchResult(worker_address(), os.getpid(), tuple(results), time.perf_counter() - start)


def reflected(blob: bytes | None, reflector: str | None) -> dict | None:
    """The reflection of a SPIR-V ``blob`` when this worker's SPIRV-Cross is the revision ``reflector``
    names; None otherwise (no revision named, another one, a text blob, a failure: the client reflects)."""
    if reflector is None or blob is None or not blob.startswith(SPIRV_MAGIC):
        return None
    try:
        return reflect(blob) if tool_version() == reflector else None
    except ReflectionError:
        return None


def farm_task(batch: FarmBatch) -> BatchResult | BatchFailure:
    """The task the client submits: the batch's result, or the exception it raised, named by worker.

    A compiler that is not the jobs' still raises :class:`CompilerMismatch`, which the
    client answers by sending the batch elsewhere."""
    try:
        return compile_farm_batch(batch)
    except CompilerMismatch:
        raise
    except Exception as exc:  # noqa: BLE001 - reported to the client, which compiles the batch elsewhere
        return BatchFailure(worker_address(), os.getpid(), f"{type(exc).__name__}: {exc}")


def _tree(job: FarmJob, batch: FarmBatch, scratch: Path) -> SourceTree:
    """The job's closure as a tree: in memory for the C API, written out for glslangValidator."""
    files = {rel: batch.files[sha] for rel, sha in job.closure}
    if batch.backend != "cli":
        return MemoryTree(files, batch.library)
    for rel, text in files.items():  # the CLI backend reads files from disk
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_text(text, encoding="utf-8")
    return SourceTree(scratch, named_root=batch.library)


def dask_setup(worker) -> None:
    """A ``local:N`` cluster's preload: its workers ignore SIGINT, which the cook answers alone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def noop(_: int) -> float:
    """A task doing nothing: its round trip is the farm's scheduling overhead."""
    return time.perf_counter()
