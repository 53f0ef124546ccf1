"""The one canonical serializer: every cache key, key hash and signature goes through it.

Sorted keys, no whitespace, UTF-8, floats in their shortest round-trip form, so the
same value gives the same bytes on every machine and every run.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson


def canonical_bytes(value: Any) -> bytes:
    """Serialize a JSON-able value canonically (sorted keys, compact)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def stable_hash(value: Any) -> str:
    """SHA-256 hex digest of the canonical serialization of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def bytes_hash(data: bytes) -> str:
    """SHA-256 hex digest of raw bytes (content addresses of blobs and files)."""
    return hashlib.sha256(data).hexdigest()
