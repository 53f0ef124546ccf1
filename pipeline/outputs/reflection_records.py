"""Reflection records: what the SPIRV-Cross tool said about a blob, so each blob is reflected once.

``reflection:<blob sha256>:<tool revision>`` (version 1): the blob's reflection document
in the shape of :func:`pipeline.outputs.reflection.normalize` (documented in docs/formats.md,
"Runtime contract")::

    {"stage", "entry", "inputs": [...], "outputs": [...], "descriptors": [...],
     "push_constants": [...], "specialization_constants": [...]}
"""

from __future__ import annotations

from pipeline.cache.store import RecordKind

REFLECTION = RecordKind("reflection", 1)
