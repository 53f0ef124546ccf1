"""What a chunk's outputs are a function of, as named digests the outputs record keeps.

A chunk's manifest and .pak depend on

- ``tool``: the record and manifest formats, the source of the modules that write outputs,
  and how manifests name the shader library;
- ``job results``: the job mapping of every key and every job's result (blob, diagnostics,
  cancelled), one digest per cook shared by its chunks;
- ``keys``: the fingerprint the chunk's keys came from (:mod:`pipeline.keys.incremental`);
- ``level``: the level its outputs go to;
- ``file errors``: the located errors of its files.

:func:`pipeline.outputs.records.outputs_current` compares them with the recorded ones and names
those that differ (``inputs changed: keys``).
"""

from __future__ import annotations

from pipeline.compile.scheduler import RunResult
from pipeline.digest import code_hash, stable_hash
from pipeline.outputs import manifest as mf
from pipeline.plan.jobs import JobPlan

OUTPUTS_VERSION = 2  # what the named input digests cover

# the modules whose source shapes a chunk's output bytes: a change there rebuilds every output once
WRITER_MODULES = ("cook/run.py", "cook/error_docs.py", "outputs/manifest.py", "outputs/pak.py",
                  "outputs/contract.py", "outputs/reflection.py", "outputs/chunk_build.py",
                  "outputs/write_chunk.py")


def shared_inputs(plan: JobPlan, run: RunResult, manifest_prefix: str) -> list[list[str]]:
    """The inputs every chunk of a cook shares: ``[["tool", digest], ["job results", digest]]``."""
    tool = stable_hash([OUTPUTS_VERSION, mf.FORMAT_VERSION, code_hash(*WRITER_MODULES), manifest_prefix])
    results = stable_hash([sorted((key.text, sorted(stages.items())) for key, stages in plan.stages.items()),
                           sorted((k, r.blob, [d.to_json() for d in r.diagnostics]) for k, r in run.results.items()),
                           sorted(run.cancelled)])
    return [["tool", tool], ["job results", results]]


def chunk_inputs(shared: list[list[str]], fingerprint: str | None, level: str,
                 errors: list[dict]) -> list[list[str]] | None:
    """The chunk's named input digests; None when its keys have no fingerprint (then its outputs
    are always built and compared)."""
    if not fingerprint:
        return None
    return [*shared, ["keys", fingerprint], ["level", stable_hash(level)], ["file errors", stable_hash(errors)]]
