"""A key's define-based jobs kept in the store, so a new process plans a known key without making them again.

:mod:`pipeline.plan.defined` keeps a key's define-based jobs in one process; a one-chunk
cook is a new process, and making the jobs of every key of the chunk again (defines per
stage, projected, each job key hashed) was about a tenth of its CPU, for keys of which the
edit changed a handful.  These records carry them across processes:

``job-defined:<hash of the generation and the key text>`` (version 1): the key's define-based
job keys, ``{target label: {stage: job key}}``;

``job-stage:<job key>`` (version 1): that job, ``{"request": CompileRequest, "closure":
[[path, sha256], ...]}`` (its options are the plan's: the generation names them).

A *generation* (:func:`generation_digest`) is what a family's define-based jobs are a function
of: the code that makes them, the rule set (its fields, and its runtime axes as the world
restricts them), the job options, and each stage source's closure (every file it includes,
by content).  A changed rule file, shader, include, setting or planning code is another
generation, whose records are made anew.  A world with plug-ins keeps no records (a
plug-in may read anything).  A record that cannot be read is made again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

import msgspec

from pipeline.cache.store import RecordKind, Store
from pipeline.compilers import CompileRequest
from pipeline.digest import code_hash, stable_hash

JOB_DEFINED = RecordKind("job-defined", 1)
JOB_STAGE = RecordKind("job-stage", 1)


@cache
def _code() -> str:
    return code_hash("plan/jobs.py", "plan/job_keys.py", "plan/links.py", "plan/defined_records.py",
                     "keys/defines.py", "rules/emit.py", "compilers/request.py")


def generation_digest(ruleset, options, closures: tuple) -> str | None:
    """The digest of one generation of ``ruleset``'s family (see the module doc); None: not recorded."""
    if options.plugins.refs():
        return None
    fields = msgspec.to_builtins(msgspec.structs.replace(ruleset, _compiled=None))
    axes = sorted((name, list(values)) for name, values in (ruleset.compiled.axes or {}).items()) \
        if ruleset.compiled is not None else []
    return stable_hash([_code(), fields, repr(axes), options.target, options.optimize, options.compiler,
                        msgspec.to_builtins(options.compile), [list(c) for c in closures]])


def record_key(generation: str, text: str) -> str:
    return stable_hash([generation, text])


def read(store: Store, wanted: Mapping[str, str], options, job_type) -> dict[str, dict]:
    """Record key -> the key's jobs (target label -> stage -> ``job_type``) of ``wanted`` (record key -> key
    text) that the store holds whole; the others are left out."""
    found = {k: doc for k, doc in store.get_many(JOB_DEFINED, wanted).items() if _shape(doc)}
    names = sorted({name for doc in found.values() for stages in doc.values() for name in stages.values()})
    docs = store.get_many(JOB_STAGE, names)
    try:  # all at once; one by one when one of them is not a job
        stored = msgspec.convert(docs, dict[str, _Stored])
    except (msgspec.ValidationError, TypeError, ValueError):
        stored = {name: one for name, one in ((n, _convert(doc)) for n, doc in docs.items()) if one is not None}
    closures: dict[tuple, tuple] = {}  # the jobs of one source share its closure
    jobs = {name: job_type(one.request, closures.setdefault(one.closure, one.closure), options, name)
            for name, one in stored.items()}
    out = {}
    for key, doc in found.items():
        if all(name in jobs for stages in doc.values() for name in stages.values()):
            out[key] = {label: {stage: jobs[name] for stage, name in stages.items()} for label, stages in doc.items()}
    return out


def write(store: Store, made: Iterable[tuple[str, Mapping]]) -> None:
    """Record each (record key, the key's jobs by target label and stage) of ``made``, in one transaction."""
    written: set[str] = set()
    with store.batched():
        for key, jobs in made:
            store.set(JOB_DEFINED, key, {label: {stage: job.key for stage, job in stages.items()}
                                         for label, stages in jobs.items()})
            for job in (job for stages in jobs.values() for job in stages.values()):
                if job.key not in written:
                    written.add(job.key)
                    store.set(JOB_STAGE, job.key, {"request": msgspec.to_builtins(job.request),
                                                   "closure": [list(c) for c in job.closure]})


class _Stored(msgspec.Struct, frozen=True):
    """A ``job-stage`` record."""

    request: CompileRequest
    closure: tuple[tuple[str, str], ...]


def _convert(doc) -> _Stored | None:
    try:
        return msgspec.convert(doc, _Stored)
    except (msgspec.ValidationError, TypeError, ValueError):
        return None


def _shape(doc) -> bool:
    return isinstance(doc, dict) and all(
        isinstance(stages, dict) and all(isinstance(name, str) for name in stages.values()) for stages in doc.values())
