"""What a chunk's outputs are a function of, as named digests the outputs record keeps.

A chunk's manifest and .pak depend on

- ``tool``: the record and manifest formats, the source of the modules that write outputs,
  and how manifests name the shader library;
- ``job results``: the jobs of each key the chunk uses (its stages, per target) and their
  results (blob, diagnostics, cancelled), so a job compiled for another chunk rebuilds nothing
  here: a cook where one chunk changed builds that chunk's index alone;
- ``keys``: the fingerprint the chunk's keys came from (:mod:`pipeline.keys.incremental`);
- ``level``: the level its outputs go to;
- ``file errors``: the located errors of its files.

:func:`pipeline.outputs.records.outputs_current` compares them with the recorded ones and names
those that differ (``inputs changed: keys``).
"""

from __future__ import annotations

from collections.abc import Iterable

from pipeline.compile.scheduler import RunResult
from pipeline.digest import code_hash, stable_hash
from pipeline.outputs import manifest as mf
from pipeline.keys.key import PermutationKey
from pipeline.plan.jobs import JobPlan

OUTPUTS_VERSION = 3  # what the named input digests cover (3: job results per chunk, not per cook)

# the modules whose source shapes a chunk's output bytes: a change there rebuilds every output once
WRITER_MODULES = ("cook/run.py", "cook/error_docs.py", "outputs/manifest.py", "outputs/pak.py",
                  "outputs/contract.py", "outputs/reflection.py", "outputs/chunk_build.py",
                  "outputs/chunk_index.py", "outputs/level_index.py", "outputs/axis_table.py",
                  "outputs/write_chunk.py")


def shared_inputs(manifest_prefix: str) -> list[list[str]]:
    """The inputs every chunk of a cook shares: ``[["tool", digest]]``."""
    return [["tool", stable_hash([OUTPUTS_VERSION, mf.FORMAT_VERSION, code_hash(*WRITER_MODULES), manifest_prefix])]]


class JobResults:
    """The ``job results`` digest of a chunk from the keys it uses; each key's part is made once per cook."""

    def __init__(self, plan: JobPlan, run: RunResult):
        self.plan, self.run = plan, run
        self._keys: dict = {}

    def of(self, keys: Iterable[PermutationKey]) -> str:
        known = self._keys  # by key text: a string's hash is kept, a key's is a Python call (300,000 at 100k files)
        return stable_hash(sorted([known.get(key.text) or self._key(key) for key in keys]))

    def _key(self, key: PermutationKey) -> str:
        """The part of a key not made yet this cook, kept by its text."""
        plan, run = self.plan, self.run
        targets = plan.targets.get(key)
        jobs = sorted(set(plan.all_jobs_for(key)))  # its stages are its primary target's
        found = self._keys[key.text] = stable_hash([
            key.text, sorted(plan.jobs_for(key).items()),
            None if targets is None else sorted((label, sorted(stages.items())) for label, stages in targets.items()),
            [_result(job, run) for job in jobs]])
        return found


def _result(job: str, run: RunResult) -> list:
    found = run.results.get(job)
    outcome = None if found is None else [found.blob, [d.to_json() for d in found.diagnostics]]
    return [job, outcome, job in run.cancelled]


def chunk_inputs(shared: list[list[str]], fingerprint: str | None, level: str,
                 errors: list[dict], job_results: str) -> list[list[str]] | None:
    """The chunk's named input digests (``job_results``: :meth:`JobResults.of` its keys); None when its
    keys have no fingerprint (then its outputs are always built and compared)."""
    if not fingerprint:
        return None
    return [*shared, ["job results", job_results], ["keys", fingerprint], ["level", stable_hash(level)],
            ["file errors", stable_hash(errors)]]
