"""The one canonical serializer: every cache key, key hash and signature goes through it.

Sorted keys, no whitespace, UTF-8, floats in their shortest round-trip form, so the
same value gives the same bytes on every machine and every run.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any, Callable

import orjson


def canonical_bytes(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Serialize a JSON-able value canonically (sorted keys, compact).

    ``default`` turns other objects into JSON-able values (as ``orjson.dumps`` takes it).
    """
    return orjson.dumps(value, default=default, option=orjson.OPT_SORT_KEYS)


def canonical_object(members: dict[str, bytes]) -> bytes:
    """The canonical bytes of an object whose member values are already canonical bytes.

    Equal to ``canonical_bytes({k: v...})`` of the decoded values, so a hash over a
    whole can be assembled from its parts' bytes, each serialized once.
    """
    return b"{" + b",".join(orjson.dumps(k) + b":" + v for k, v in sorted(members.items())) + b"}"


_canon = functools.partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)  # canonical_bytes without its Python frame


def _same(value: Any) -> tuple:
    """What two values with equal canonical bytes share (a float by its exact bits: -0.0 is not 0.0)."""
    return (float, value.hex()) if type(value) is float else (type(value), value)


def sorted_unique(items) -> list:
    """Distinct items sorted by their canonical bytes."""
    items = list(items)
    try:  # scalars (a key's specialization values, one per draw) are told apart before serializing
        items = list({_same(item): item for item in items}.values())
    except TypeError:  # a dict or list among them
        pass
    by_bytes = dict(zip(map(_canon, items), items))
    return [by_bytes[k] for k in sorted(by_bytes)]


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
