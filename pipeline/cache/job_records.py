"""Compile job records: what each stage job produced, and what it was compiled from.

``job:<job key>`` (version 2), written by the scheduler after every compile::

    {"blob": "<sha256 of the SPIR-V/GLSL blob>" | null,
     "diagnostics": [{"file", "line", "col", "pointer", "severity", "message", "in_materials"?}, ...]}

A diagnostic's file in the shader library is kept relative to it (``"in_materials": true``)
and read back under the library's canonical folder: the record depends neither on the
working folder nor on where the library is.

A record with a blob is a hit only while the blob is in the store and intact; a
record without one remembers a compile error (reported again, not recompiled until
an input changes).

``job-identity:<identity>`` (version 1): the job last compiled for one (source,
stage, entry, defines), so that a miss can say why it runs (``cook --explain``)::

    {"key": "<job key>", "closure": [["<path>", "<sha256>"], ...],
     "compiler": "<backend identity>", "target": "vulkan1.2", "optimize": false,
     "plugins": [[name, version, code], ...]}    (plugins: only for a job that went through plug-ins)

``job-exact:<hash of a define-based job key, the preprocessing code and the allowed roots>``
(version 1): the exact job key (by preprocessed text, :mod:`pipeline.plan.jobs`) that
preprocessing gave that job, so a later plan need not preprocess it again::

    "<job key>"
"""

from __future__ import annotations

from pipeline.cache.store import RecordKind

JOB = RecordKind("job", 2)
JOB_IDENTITY = RecordKind("job-identity", 1)
JOB_EXACT = RecordKind("job-exact", 1)
