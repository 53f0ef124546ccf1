"""The records of the shared cache tier: their shape, checked on every read, and their signature.

Every job and use record read from the tier is decoded into the structs below
(msgspec): a field of the wrong type or shape (a blob named by a list, a line
that is a string, a missing key) makes the record a miss with one warning, never
an exception in the cook.  A blob's name is 64 lowercase hex digits.

**Signed records.**  A team may sign its job records with a shared key: the
``signature`` field holds the hex HMAC-SHA256, under the key, of the record's
canonical bytes (:func:`pipeline.digest.canonical_bytes`: sorted keys, compact
JSON) without the ``signature`` field.  The key comes from the environment
variable :data:`KEY_VARIABLE`, else from the file named by ``[cache] key_file``
in ``pipeline.toml`` (relative to the world root; its bytes, surrounding
whitespace removed), never from the tier.  With a key, every job record written
is signed and a record read without a valid signature is a miss; without a key,
signatures are neither written nor checked.  Use records (what ``gc`` keeps) are
not signed.

**Folder tiers.**  Every entry of a folder tier is read through
:func:`pipeline.fileio.read_regular`: a regular file of at most
:data:`MAX_RECORD_BYTES` (a record) or :data:`MAX_BLOB_BYTES` (a blob).  A FIFO, a
device, a symlink to one or an entry over its bound is a miss and a warning,
never a hang or a read without end.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from pipeline.digest import canonical_bytes
from pipeline.errors import ConfigError
from pipeline.fileio import FileReadError, read_regular

KEY_VARIABLE = "PIPELINE_CACHE_KEY"
MAX_KEY_BYTES = 4096
MAX_RECORD_BYTES = 2**20          # a job or use record read from a folder tier
MAX_BLOB_BYTES = 64 * 2**20       # a blob read from a folder tier
Digest = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class RecordDiagnostic(msgspec.Struct, frozen=True):
    file: str
    message: str
    line: int | None = None
    col: int | None = None
    severity: Literal["error", "warning"] = "error"


class JobRecord(msgspec.Struct, frozen=True):
    version: int
    key: str
    blob: Digest | None
    compiler: str = ""
    diagnostics: tuple[RecordDiagnostic, ...] = ()
    signature: str | None = None


class UseRecord(msgspec.Struct, frozen=True):
    version: int
    time: float
    jobs: tuple[str, ...] = ()


def shaped(doc: dict, kind: type[msgspec.Struct]) -> tuple[msgspec.Struct | None, str]:
    """``doc`` as a ``kind`` record, or None and why not (msgspec's words: what, and where)."""
    try:
        return msgspec.convert(doc, kind), ""
    except msgspec.ValidationError as exc:
        return None, str(exc)


def signature(doc: dict, key: bytes) -> str:
    """The hex HMAC-SHA256 of ``doc``'s canonical bytes without its ``signature`` field."""
    body = {k: v for k, v in doc.items() if k != "signature"}
    return hmac.new(key, canonical_bytes(body), hashlib.sha256).hexdigest()


def signed(doc: dict, key: bytes | None) -> dict:
    """``doc`` with its signature under ``key`` (without a key: as it is)."""
    return doc if key is None else {**doc, "signature": signature(doc, key)}


def signature_problem(doc: dict, key: bytes) -> str | None:
    """'unsigned' or 'wrongly signed' when ``doc`` does not carry a valid signature under ``key``."""
    given = doc.get("signature")
    if given is None:
        return "unsigned"
    if not isinstance(given, str) or not hmac.compare_digest(given, signature(doc, key)):
        return "wrongly signed"
    return None


def read_entries(paths: list[str], limit: int, warn) -> dict[str, bytes]:
    """Folder tier: the bytes of each path that is a regular file within ``limit``; a missing one is left
    out, anything else that cannot be read is left out with ``warn(message)``."""
    found = {}
    for path in paths:
        try:
            found[path] = read_regular(path, limit=limit)
        except FileReadError as exc:
            if not _missing(path):
                warn(f"{path}: {exc.diagnostics[0].message}; ignoring it")
    return found


def _missing(path: str) -> bool:
    """True when nothing is at ``path`` (a dangling symlink included); False when something is, or when it
    cannot be looked at (a folder that refuses access is not a miss to keep quiet about)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return False


def team_key(root: Path, key_file: Path | None) -> bytes | None:
    """The team key: ``$PIPELINE_CACHE_KEY``, else the file ``key_file`` (relative to ``root``), else None."""
    value = os.environ.get(KEY_VARIABLE, "").strip()
    if value:
        return value.encode("utf-8")
    if key_file is None:
        return None
    path = root / key_file
    try:
        key = read_regular(path, limit=MAX_KEY_BYTES, what="the team cache key (cache.key_file)",
                           limit_name=f"{MAX_KEY_BYTES} bytes for a key").strip()
    except FileReadError as exc:
        raise ConfigError(exc.diagnostics) from None
    if not key:
        raise ConfigError.at(str(path), "the team cache key (cache.key_file) is empty")
    return key
