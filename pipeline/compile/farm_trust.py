"""What the client accepts from a farm worker, and what it does with a worker that lies.

A worker runs the compiler and spirv-val; the client takes nothing on faith:

- **Shape.** A batch's answer must be a :class:`~pipeline.compile.farm_worker.BatchResult`
  holding one :class:`~pipeline.compile.farm_worker.FarmResult` per job sent, with bytes
  (never text) as the blob and located diagnostics.  Anything else is garbage.
- **Each blob** must match the digest sent with it and pass
  :func:`~pipeline.compilers.blob_check.blob_problem` for its job (SPIR-V magic,
  the stage's execution model, the entry point: microseconds, no spirv-val, which
  the worker ran).  A blob that fails is discarded and its job compiled here.
  Its reflection, when the worker sent one, must be a JSON object (SPIRV-Cross's
  output, made by the revision the client named); the audit compares it too.
- **Failures are not remembered from a farm.**  A worker's compile failure is
  confirmed by compiling the job here; only this machine's failure is stored (and
  remembered by the cache).  A failure for a job that compiles here is a lie.
- **Audit.** ``--audit N`` recompiles N% of the farm's results here (at least one
  job when N > 0; the jobs chosen by a generator seeded from the job keys, so the
  same cook audits the same jobs) and compares the bytes: compiles are
  deterministic, so a difference is a worker shipping a wrong shader (and so is SPIRV-Cross: a
  reflection the worker sent is compared with this machine's of the same blob).  That fails
  the cook (a located error naming the worker and the job) and no result of that
  worker is used.

A worker caught once is distrusted for the rest of the cook (:class:`Trust`): it
gets no more jobs, whatever it still sends is compiled here instead, and one
warning names it with the first reason.
"""

from __future__ import annotations

import hashlib
import math
import random

import msgspec

from pipeline.compilers import CompileOutput
from pipeline.compilers.blob_check import blob_problem
from pipeline.compile.farm_worker import BatchResult, FarmResult
from pipeline.plan.jobs import StageJob
from pipeline.digest import bytes_hash
from pipeline.errors import CookDiagnostic, Diagnostic, Location


def audit_sample(keys: list[str], percent: float) -> set[str]:
    """The job keys to audit: ``percent`` % of ``keys`` (at least one when percent > 0), seeded from the keys."""
    if percent <= 0 or not keys:
        return set()
    ordered = sorted(keys)
    seed = hashlib.sha256("\n".join(ordered).encode("utf-8")).hexdigest()
    count = min(len(ordered), max(1, math.ceil(len(ordered) * percent / 100)))
    return set(random.Random(seed).sample(ordered, count))


def batch_problem(result: object, jobs: list[StageJob]) -> str | None:
    """Why a batch's answer is not one (None: its shape is right; each job is checked apart)."""
    if not isinstance(result, BatchResult):
        return f"answered with {type(result).__name__}, not a batch result"
    if not isinstance(result.worker, str) or not isinstance(result.results, tuple):
        return "answered with a malformed batch result"
    return None


def job_output(job: StageJob, results: tuple, seconds_default: float = 0.0,
               reflector: str | None = None) -> tuple[CompileOutput | None, str]:
    """The output a worker sent for ``job`` after the client's checks, or ``(None, why not)``; its
    reflection kept as ``(reflector, document)`` when ``reflector`` (the revision the batch named) is given.

    A failure is returned as it came (``spirv`` None): the caller confirms it here."""
    found = [r for r in results if isinstance(r, FarmResult) and r.key == job.key]
    if not found:
        return None, f"sent no result for job {job.key[:12]}"
    r = found[0]
    if not isinstance(r.diagnostics, tuple) or not all(isinstance(d, Diagnostic) for d in r.diagnostics):
        return None, f"sent malformed diagnostics for job {job.key[:12]}"
    seconds = r.seconds if isinstance(r.seconds, (int, float)) else seconds_default
    if r.spirv is None:
        return CompileOutput(None, r.diagnostics, seconds), ""
    if not isinstance(r.spirv, (bytes, bytearray)):
        return None, f"sent a {type(r.spirv).__name__} as the blob of job {job.key[:12]}"
    if bytes_hash(bytes(r.spirv)) != r.digest:
        return None, f"sent a blob for job {job.key[:12]} that does not match the digest sent with it"
    problem = blob_problem(job.request, bytes(r.spirv))
    if problem:
        return None, f"sent a blob for job {job.key[:12]} ({job.request.source} {job.request.stage}) " \
                     f"that cannot be its output: {problem}"
    reflection = getattr(r, "reflection", None)
    if reflection is not None and (not isinstance(reflection, dict) or not all(isinstance(k, str) for k in reflection)):
        return None, f"sent a malformed reflection for job {job.key[:12]}"
    kept = (reflector, reflection) if reflection is not None and reflector is not None else None
    return CompileOutput(bytes(r.spirv), r.diagnostics, seconds, kept), ""


class Trust(msgspec.Struct):
    """The workers caught this cook, the warnings about them and the audit errors."""

    banned: dict[str, str] = msgspec.field(default_factory=dict)       # worker -> the first reason
    warnings: list[str] = msgspec.field(default_factory=list)
    errors: list[CookDiagnostic] = msgspec.field(default_factory=list)

    def ban(self, worker: str, why: str, then: str = "its jobs are compiled elsewhere") -> None:
        """Distrust ``worker`` for the rest of the cook; one warning per worker."""
        if worker in self.banned:
            return
        self.banned[worker] = why
        self.warnings.append(f"{worker}: farm worker {why}; it gets no more jobs this cook and {then}")

    def audit_failed(self, worker: str, jobs: list[StageJob], audited: int, where: str) -> None:
        """A worker's blobs differ from this machine's compiles of the same jobs: one located error,
        at the first job's source (``where``), naming the worker and the job."""
        first = jobs[0]
        more = f" and {len(jobs) - 1} more" if len(jobs) > 1 else ""
        self.errors.append(CookDiagnostic(Location(where), (
            f"audit: farm worker {worker} sent other bytes than this machine makes for job {first.key[:12]} "
            f"({first.request.stage}){more} ({audited} of its results audited); none of its results is used "
            f"(compiled here instead)")))
        self.banned.setdefault(worker, f"failed the audit on job {first.key[:12]}")
