"""A Dask worker preload that makes farm workers misbehave, for the farm trust and failure tests.

Loaded with ``preload=["farm_faults"]`` (LocalCluster) or
``DASK_DISTRIBUTED__WORKER__PRELOAD='["farm_faults"]'`` (any worker this environment
starts; ``tests/`` on ``PYTHONPATH``).  It replaces the worker-side batch function,
``pipeline.compile.farm_worker.compile_farm_batch`` (the submitted task looks it up by
name), with one that runs the real compile and then lies or fails as the fault says.

The fault comes from ``$PIPELINE_FARM_FAULT`` at start, for the worker named by
``$PIPELINE_FARM_FAULT_WORKER`` (a LocalCluster names its workers 0, 1, ...; ``all``:
every worker), or from :func:`set_fault` through ``client.run``.  Faults:

- ``other-stage``: each blob is a shader of another stage (caught by the blob check);
- ``same-stage``: each blob is another shader of the same stage and entry point
  (valid, and only an audit catches it);
- ``reflection-garbage``: the reflection sent with each blob is a string (caught by the shape check);
  ``reflection-lie``: it is a well-formed document of another shader (only an audit catches it);
- ``text``: the blob is a ``str``; ``garbage``: bytes that are no SPIR-V, with their digest;
- ``fail``: every job "fails" with a made-up diagnostic;
- ``missing``: no results; ``unparsable``: the task returns a string;
- ``raise``: the batch raises; ``hang``: it sleeps an hour; ``die``: the worker
  SIGKILLs itself; ``die-at-start``: it SIGKILLs itself when asked for its compiler;
- ``slow``: an honest worker that takes ``$PIPELINE_FARM_SLOW`` seconds per batch
  (0.5 by default) and touches ``$PIPELINE_FARM_MARK`` when a batch starts.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from pipeline.compile import farm_worker
from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend
from pipeline.digest import bytes_hash
from pipeline.errors import Diagnostic, Location
from pipeline.structs import replace

REAL_BATCH = farm_worker.compile_farm_batch
REAL_IDENTITY = farm_worker.worker_identity
STATE = {"fault": "honest"}
TINY = {"vertex": "#version 450\nvoid main() { gl_Position = vec4(0.25); }\n",
        "fragment": "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(0.5); }\n"}
OTHER = {"vertex": "fragment", "fragment": "vertex"}


def dask_setup(worker) -> None:
    """Called by Dask when the worker starts: take the fault meant for this worker."""
    chosen = os.environ.get("PIPELINE_FARM_FAULT_WORKER", "all")
    if chosen == "all" or str(worker.name) == chosen:
        STATE["fault"] = os.environ.get("PIPELINE_FARM_FAULT", "honest")
    farm_worker.compile_farm_batch = faulty_batch
    farm_worker.worker_identity = faulty_identity


def set_fault(fault: str) -> str:
    """Switch this worker's fault (through ``client.run``); returns the worker's pid as text."""
    STATE["fault"] = fault
    return str(os.getpid())


def tiny_blob(stage: str, target: str, backend: str) -> bytes:
    """A valid shader of ``stage`` that is no job's output."""
    request = CompileRequest("tiny." + stage[:4], stage, text=TINY[stage], target=target)
    output = compile_one(request, SourceTree(Path("/")), get_backend(backend))
    assert output.spirv is not None, output.diagnostics
    return output.spirv


def faulty_identity(backend: str) -> str:
    if STATE["fault"] == "die-at-start":
        os.kill(os.getpid(), signal.SIGKILL)
    return REAL_IDENTITY(backend)


def faulty_batch(batch):
    fault = STATE["fault"]
    if fault == "raise":
        raise RuntimeError("injected fault")
    if fault == "hang":
        time.sleep(3600)
    if fault == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if fault == "unparsable":
        return "not a batch result"
    if fault == "slow":
        mark = os.environ.get("PIPELINE_FARM_MARK")
        if mark:
            Path(mark).touch()
        time.sleep(float(os.environ.get("PIPELINE_FARM_SLOW", "0.5")))
    result = REAL_BATCH(batch)
    if fault in ("honest", "slow", "die-at-start"):
        return result
    if fault == "missing":
        return replace(result, results=())
    requests = {job.key: job.request for job in batch.jobs}
    return replace(result, results=tuple(lie(r, requests[r.key], batch.backend, fault)
                                         for r in result.results))


def lie(result, request: CompileRequest, backend: str, fault: str):
    if fault == "fail":
        made_up = Diagnostic(Location("materials/pbr/pbr.frag", 1, 1), "made-up failure")
        return replace(result, spirv=None, digest=None, diagnostics=(made_up,))
    if result.spirv is None:
        return result
    if fault == "reflection-garbage":
        return replace(result, reflection="not a reflection")
    if fault == "reflection-lie":  # a well-formed document, of another shader
        return replace(result, reflection={"stage": "compute", "entry": "main", "inputs": [],
                                           "outputs": [], "descriptors": [], "push_constants": [],
                                           "specialization_constants": []})
    if fault == "text":
        text = "; SPIR-V\n; a disassembly, not a blob\n"
        return replace(result, spirv=text, digest=bytes_hash(text.encode()))
    if fault == "garbage":
        blob = b"garbage!" * 8
    elif fault == "other-stage":
        blob = tiny_blob(OTHER[request.stage], request.target, backend)
    elif fault == "same-stage":
        blob = tiny_blob(request.stage, request.target, backend)
    else:
        raise ValueError(f"unknown fault {fault!r}")
    return replace(result, spirv=blob, digest=bytes_hash(blob))
