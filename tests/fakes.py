"""A fake compiler for unit tests of the cook: deterministic blobs, no glslang, counts what ran.

:class:`FakeCompiler` is a :class:`~pipeline.compile.scheduler.JobRunner` whose compile
step makes a blob from the job key instead of running a compiler; the scheduling
around it (inline runs, fail-fast cancelling, ``calls``) is the runner's own.  It
records every job it compiled, by key and per ``run`` call, and fails the jobs its
``fail`` predicate picks with a located error, as a real shader error would be.

Every behaviour tested with it is also tested end to end with the real compiler
(tests/e2e/test_cook_sample_world.py, tests/unit/keys/test_incremental.py).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pipeline.compilers import CompileOutput
from pipeline.plan.jobs import StageJob
from pipeline.compile.scheduler import JobRunner
from pipeline.errors import Diagnostic, Location

FAKE_MAGIC = b"FAKE"
FAKE_ERROR = "fake compile error"


def fake_blob(job_key: str) -> bytes:
    """The blob :class:`FakeCompiler` makes for a job: the same key gives the same bytes."""
    return FAKE_MAGIC + hashlib.sha256(job_key.encode()).digest()


def failing(stage: str | None = None, define: tuple[str, str] | None = None,
            source: str | None = None) -> Callable[[StageJob], bool]:
    """A ``fail`` predicate picking the jobs of ``stage`` / with ``define`` / compiling ``source``."""

    def pick(job: StageJob) -> bool:
        r = job.request
        return ((stage is None or r.stage == stage) and (define is None or define in r.defines)
                and (source is None or r.source == source))

    return pick


class FakeCompiler(JobRunner):
    """Compiles nothing: blob = :func:`fake_blob` of the job key, or a located error for ``fail``'s jobs."""

    identity = "fake-compiler 1 (tests)"  # part of the job keys: never mixed with real compiles

    def __init__(self, materials_dir: Path, *, fail: Callable[[StageJob], bool] | None = None):
        super().__init__(materials_dir, "fake", jobs=1)
        self.fail = fail or (lambda job: False)
        self.compiled: Counter[str] = Counter()  # job key -> times compiled
        self.runs: list[list[str]] = []           # job keys compiled, per run() call
        self.failed: list[str] = []               # job keys that came out as errors

    def run(self, jobs: list[StageJob], on_done, fail_fast: bool = False) -> list[str]:
        self.runs.append([])
        return super().run(jobs, on_done, fail_fast)

    def _batch(self, jobs: list[StageJob]) -> list[CompileOutput]:
        outputs = []
        for job in jobs:
            self.compiled[job.key] += 1
            self.runs[-1].append(job.key)
            if self.fail(job):
                self.failed.append(job.key)
                where = Location(self.library + job.request.source, 1, 1)
                outputs.append(CompileOutput(None, (Diagnostic(where, f"{FAKE_ERROR} ({job.request.stage})"),)))
            else:
                outputs.append(CompileOutput(fake_blob(job.key)))
        self.calls += len(outputs)
        return outputs
