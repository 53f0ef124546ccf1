"""The one canonical serializer: every cache key, key hash and signature goes through it.

Sorted keys, no whitespace, UTF-8, floats in their shortest round-trip form, so the
same value gives the same bytes on every machine and every run.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
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


PACKAGE_DIR = Path(__file__).resolve().parent


@functools.cache
def code_hash(*parts: str) -> str:
    """Hash of the package's own source under ``parts`` (files or folders, relative to ``pipeline/``).

    A record that depends on how code turns inputs into outputs stores this hash, so a
    changed scanner, evaluator or writer misses every record it made.
    """
    h = hashlib.sha256()
    for part in parts:
        path = PACKAGE_DIR / part
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            h.update(f.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
            try:
                h.update(f.read_bytes())
            except OSError:
                h.update(b"<missing>")
    return h.hexdigest()
