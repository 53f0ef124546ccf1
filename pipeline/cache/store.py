"""The on-disk cache: one diskcache database, namespaced, with content-addressed blobs.

Layout (all inside one ``diskcache.Cache`` directory):

- ``("meta", "format")`` -> :data:`FORMAT_VERSION`.  A cache written by another
  format version is not read: it is cleared (with a warning) and rebuilt.
- ``("blob", sha256)`` -> bytes.  Blobs are stored by the hash of their content,
  so identical binaries from different jobs are stored once.  Every read checks
  the hash: a corrupt blob is a miss, never a wrong blob.
- ``(namespace, key)`` -> any picklable value, for the other stages
  (``"scan"`` file facts, ``"job"`` compile results, ...).

A database file that SQLite cannot open (garbage, truncated) is moved aside
(``cache.db.corrupt-<pid>``, with a warning) and the cache starts over.

diskcache writes each entry in one SQLite transaction, so a killed process leaves
either the old or the new entry, never half of one; several processes may share
one cache directory.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import diskcache

from pipeline.digest import bytes_hash

FORMAT_VERSION = 1
DEFAULT_CACHE_DIR = "cache"
DATABASE = "cache.db"  # diskcache's SQLite file inside the cache folder
_MISSING = object()


class CacheWarning(UserWarning):
    """A cache entry could not be used; it is treated as a miss."""


def default_cache_dir(cwd: Path | None = None) -> Path:
    """``$PIPELINE_CACHE`` if set, else ``cache/`` under the working directory."""
    env = os.environ.get("PIPELINE_CACHE")
    return Path(env) if env else (cwd or Path.cwd()) / DEFAULT_CACHE_DIR


class Store:
    """Namespaced key-value entries plus content-addressed blobs on disk."""

    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.warnings: list[str] = []
        self._cache = self._open()
        self._check_format()

    def _open(self) -> diskcache.Cache:
        """Open the database; one that is not a database (garbage, truncated) is set aside and rebuilt."""
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            return self._connect()

    def _connect(self) -> diskcache.Cache:
        # size_limit: never evict silently below 64 GiB; eviction would only cost recompiles.
        return diskcache.Cache(str(self.directory), size_limit=64 * 2**30, timeout=60)

    def _set_aside(self, exc: Exception) -> None:
        db = self.directory / DATABASE
        aside = f"{DATABASE}.corrupt-{os.getpid()}"
        self.warn(f"{self.directory}: cache database is unreadable ({exc}); moved it to {aside}, starting over")
        for suffix in ("", "-wal", "-shm"):
            try:
                os.replace(f"{db}{suffix}", self.directory / f"{aside}{suffix}")
            except FileNotFoundError:
                pass

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_format(self) -> None:
        found = self._safe_get(("meta", "format"))
        if found is _MISSING:
            self._cache.set(("meta", "format"), FORMAT_VERSION)
        elif found != FORMAT_VERSION:
            self.warn(f"{self.directory}: cache format {found!r} is not {FORMAT_VERSION}; starting over")
            self._cache.clear()
            self._cache.set(("meta", "format"), FORMAT_VERSION)

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        warnings.warn(message, CacheWarning, stacklevel=2)

    def _safe_get(self, key: tuple) -> Any:
        try:
            return self._cache.get(key, default=_MISSING)
        except Exception as exc:  # unreadable entry: a miss, never a crash
            self.warn(f"{self.directory}: unreadable cache entry {key!r} ({type(exc).__name__}: {exc}); ignoring it")
            return _MISSING

    # ------------------------------------------------------------ entries
    def get(self, namespace: str, key: str, default: Any = None) -> Any:
        value = self._safe_get((namespace, key))
        return default if value is _MISSING else value

    def set(self, namespace: str, key: str, value: Any) -> None:
        self._cache.set((namespace, key), value)

    def delete(self, namespace: str, key: str) -> None:
        self._cache.delete((namespace, key))

    def keys(self, namespace: str) -> list[str]:
        """Every key of one namespace (blobs: ``"blob"``), in no particular order."""
        return [k[1] for k in self._cache.iterkeys() if isinstance(k, tuple) and len(k) == 2 and k[0] == namespace]

    def volume(self) -> int:
        """Bytes the cache folder holds on disk (database and value files)."""
        return self._cache.volume()

    # ------------------------------------------------------------ blobs
    def put_blob(self, data: bytes) -> str:
        """Store ``data`` by content; returns its SHA-256 hex digest."""
        digest = bytes_hash(data)
        if self.get_blob(digest) is None:  # absent, or corrupt (then dropped): write it
            self._cache.set(("blob", digest), bytes(data))
        return digest

    def get_blob(self, digest: str) -> bytes | None:
        """The blob with this digest, or None when missing or corrupt (with a warning)."""
        data = self._safe_get(("blob", digest))
        if data is _MISSING:
            return None
        if not isinstance(data, bytes) or bytes_hash(data) != digest:
            self.warn(f"{self.directory}: blob {digest[:12]} is corrupt; dropping it")
            self._cache.delete(("blob", digest))
            return None
        return data

    def has_blob(self, digest: str) -> bool:
        """True when the blob is present and intact; a corrupt one is dropped (with a warning)."""
        return self.get_blob(digest) is not None
