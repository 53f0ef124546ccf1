"""Reflection records: what the SPIRV-Cross tool said about a blob, so each blob is reflected once.

``reflection:<blob sha256>:<tool revision>`` (version 2; version 1 gave a push-constant block the offset
of its last member as its size): the blob's reflection document
in the shape of :func:`pipeline.outputs.reflection.normalize` (documented in docs/formats.md,
"Runtime contract")::

    {"stage", "entry", "inputs": [...], "outputs": [...], "descriptors": [...],
     "push_constants": [...], "specialization_constants": [...]}
"""

from __future__ import annotations

from pipeline.cache.store import RecordKind

REFLECTION = RecordKind("reflection", 2)  # 2: a push-constant block's size is the end of its last member
