"""The shared cache tier as the cook uses it: read-through and write-back.

The scheduler looks every job up in the local store first.  The local misses are
asked of the shared tier (:class:`~pipeline.cache.remote.RemoteCache`) in one
batched read of their job records and one of their blobs.  Nothing read is
trusted: a blob must hash to its name and prove it can be the output of its job
(:func:`~pipeline.compilers.blob_check.blob_problem` with spirv-val: SPIR-V of
the job's target, stage, entry point and execution model, or GLSL text); one that
cannot is a miss and one warning naming its URL, the job and why.  A record of a
failed compile is a miss without a word: the job compiles here, and a real
failure is then remembered like any local one.  What passes is copied into the
local store and counts as a cache hit, ``fetched``.  What is still missing compiles here (or on the farm), and in ``readwrite`` mode
every result this machine compiled is written back, in groups of
:data:`WRITE_BACK_EVERY` as they arrive, the rest when the cook's compiles end.

Diagnostics are stored relative to the shader library and read back under this
machine's shader library folder, so a record written from one checkout reads right in
another.  A job whose diagnostics name a file outside the shader library is not
written back.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.compilers import CompileOutput
from pipeline.compilers.blob_check import blob_problem
from pipeline.plan.jobs import StageJob
from pipeline.digest import bytes_hash
from pipeline.errors import ConfigError, Diagnostic, Location

if TYPE_CHECKING:
    from pipeline.cache.remote import RemoteCache
    from pipeline.cache.remote_records import JobRecord, RecordDiagnostic
    from pipeline.world import World

WRITE_BACK_EVERY = 32


class SharedTier:
    """Read-through and write-back between a cook and a :class:`RemoteCache`."""

    def __init__(self, cache: RemoteCache, library: str):
        self.cache = cache
        self.library = library  # the shader library's canonical folder (``/home/me/game/materials/``)
        self.fetched = 0
        self.written = 0
        self.seconds = 0.0
        self._blobs: dict[str, bytes] = {}
        self._records: dict[str, dict] = {}

    @property
    def warnings(self) -> list[str]:
        return self.cache.warnings

    def to_json(self) -> dict:
        return {"url": self.cache.url, "mode": self.cache.mode, "fetched": self.fetched,
                "written_back": self.written, "seconds": round(self.seconds, 4)}

    # ------------------------------------------------------------ read-through
    def fetch(self, jobs: list[StageJob]) -> dict[str, CompileOutput]:
        """What the shared tier holds for ``jobs`` and proves to be their output, by job key (a failed compile,
        a missing blob or one that is not the job's output is a miss)."""
        began = time.perf_counter()
        by_key = {j.key: j for j in jobs}
        records = {k: r for k, r in self.cache.get_records(list(by_key)).items() if r.blob is not None}
        self.cache.signature_warning()
        blobs = self.cache.get_blobs({r.blob for r in records.values()})
        found = {}
        for key, record in sorted(records.items()):
            output = self._output(by_key[key], record, blobs.get(record.blob))
            if output is not None:
                found[key] = output
        self.fetched += len(found)
        self.seconds += time.perf_counter() - began
        return found

    def _output(self, job: StageJob, record: JobRecord, blob: bytes | None) -> CompileOutput | None:
        if blob is None:
            return None
        problem = blob_problem(job.request, blob, validate=True)
        if problem is None and any(d.severity == "error" for d in record.diagnostics):
            problem = "its record says the compile failed"
        if problem is not None:
            self.cache.warn(f"job {job.key[:12]} ({job.request.source}, {job.request.stage}): blob "
                            f"{record.blob[:12]} is not its output: {problem}; it compiles here")
            return None
        return CompileOutput(blob, tuple(self._diagnostic(d) for d in record.diagnostics))

    def _diagnostic(self, data: RecordDiagnostic) -> Diagnostic:
        return Diagnostic(Location(self.library + data.file, data.line, data.col), data.message, data.severity)

    # ------------------------------------------------------------ write-back
    def compiled(self, job: StageJob, output: CompileOutput) -> None:
        """Queue a result this machine compiled; written back in groups (not once the tier is off)."""
        if not self.cache.writable or self.cache.failure is not None:
            return
        diagnostics = [self._relative(d) for d in output.diagnostics]
        if any(d is None for d in diagnostics):
            return
        blob = None
        if output.spirv is not None:
            blob = bytes_hash(output.spirv)
            self._blobs[blob] = output.spirv
        self._records[job.key] = {"blob": blob, "diagnostics": diagnostics, "compiler": job.options.compiler}
        if len(self._records) >= WRITE_BACK_EVERY:
            self.flush()

    def _relative(self, d: Diagnostic) -> dict | None:
        if not d.location.file.startswith(self.library):
            return None
        return {"file": d.location.file[len(self.library):], "line": d.location.line, "col": d.location.col,
                "severity": d.severity, "message": d.message}

    def flush(self) -> None:
        if not self._records:
            return
        began = time.perf_counter()
        if self.cache.put(self._blobs, self._records):
            self.written += len(self._records)
        self._blobs, self._records = {}, {}
        self.seconds += time.perf_counter() - began

    def finish(self) -> None:
        """The cook's compiles are over: write back what is queued."""
        self.flush()

    def record_use(self, job_keys) -> None:
        """Tell the shared tier which jobs this cook used (what ``gc`` keeps)."""
        began = time.perf_counter()
        self.cache.record_use(list(job_keys))
        self.seconds += time.perf_counter() - began


def world_tier(world: "World", url: str | None, mode: str | None, options: dict | None,
               library: str) -> SharedTier | None:
    """The shared tier named by ``url``, else by the world's pipeline.toml ``[cache] remote`` (a folder
    there is relative to the world), or None; ``options`` go to fsspec, ``library``: the canonical
    folder of the shader library (:class:`SharedTier`)."""
    if url is None and world.config.cache.remote is not None:
        url = world.config.cache.remote
        if "://" not in url and not Path(url).is_absolute():
            url = str(world.root / url)
    if not url:
        return None
    try:
        from pipeline.cache.remote import RemoteCache, RemoteCacheError  # fsspec: the [remote] extra
        from pipeline.cache.remote_records import team_key
    except ImportError as exc:
        raise ConfigError.at(url, f"a shared cache needs fsspec: pip install 'permutation-pipeline[remote]' ({exc})")
    try:
        remote = RemoteCache(url, mode=mode or world.config.cache.remote_mode, storage_options=options,
                             key=team_key(world.root, world.config.cache.key_file))
    except RemoteCacheError as exc:
        raise ConfigError.at(url, str(exc)) from None
    return SharedTier(remote, library)
