"""The on-disk cache: one diskcache database of data-only records and content-addressed blobs.

Layout (all inside one ``diskcache.Cache`` directory, string keys only):

- ``meta:format`` -> :data:`FORMAT_VERSION` (an integer).  A cache of an older format
  (or of no format) is cleared with a warning and rebuilt; a cache of a *newer* format
  belongs to a newer tool: it is left alone, with a warning, and this run works
  in memory (everything is a miss, nothing is written to it).
- ``blob:<sha256>`` -> bytes.  Blobs are stored by the hash of their content, so
  identical binaries from different jobs are stored once.  Every read checks the
  hash: a corrupt blob is a miss, never a wrong blob.
- ``<kind>:<key>`` -> the bytes of ``{"v": version, "data": ...}`` in the canonical
  JSON form (:mod:`pipeline.digest`), one record kind per module of this package, each
  documenting its layout and version (:class:`RecordKind`).  A record of another
  version, or one that does not decode, is a miss.

No value is ever pickled, and a stored pickle is never loaded (:class:`DataDisk`): a
crafted cache entry is an unreadable entry, a warning and a miss, not code that runs.

``Store(directory, read_only=True)`` is a look that changes nothing on disk: it reads the
database through a plain SQLite connection (opening it with diskcache rewrites its
settings, and so the file), creates no file or folder, and keeps what would be written
in memory for the rest of the run.

A database file that SQLite cannot open (garbage, truncated) is moved aside
(``cache.db.corrupt-<pid>``, with a warning) and the cache starts over.

diskcache writes each entry in one SQLite transaction, so a killed process leaves
either the old or the new entry, never half of one; several processes may share
one cache directory.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import diskcache
import msgspec
import orjson

from pipeline.cache.backends import (QUERY_KEYS, DataDisk, MemoryCache, ReadOnlyCache, peek_format, present_many,
                                     read_many)
from pipeline.digest import bytes_hash, canonical_bytes

FORMAT_VERSION = 2  # 2: data-only records (JSON) and string keys; 1 held pickles
DEFAULT_CACHE_DIR = "cache"
DATABASE = "cache.db"  # diskcache's SQLite file inside the cache folder
_MISSING = object()
_META = "meta:format"


class CacheWarning(UserWarning):
    """A cache entry could not be used; it is treated as a miss."""


class RecordKind(msgspec.Struct, frozen=True):
    """One kind of record: its key prefix in the store and the version of its layout."""

    namespace: str
    version: int


def default_cache_dir(cwd: Path | None = None) -> Path:
    """``$PIPELINE_CACHE`` if set, else ``cache/`` under the working directory."""
    env = os.environ.get("PIPELINE_CACHE")
    return Path(env) if env else (cwd or Path.cwd()) / DEFAULT_CACHE_DIR


class Store:
    """Namespaced key-value entries plus content-addressed blobs on disk."""

    def __init__(self, directory: Path | str, read_only: bool = False):
        self.directory = Path(directory)
        self.warnings: list[str] = []
        self._pending: dict[str, bytes] | None = None  # records held by batched()
        self.on_disk = True  # False: a newer tool's cache, left alone (nothing may be written beside it)
        self.read_only = read_only
        if read_only:
            self.on_disk = False
            self._cache = ReadOnlyCache(self.directory / DATABASE)
            if self._safe_get(_META) not in (FORMAT_VERSION, _MISSING):
                self._cache = MemoryCache()  # another format: every record is a miss
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        found = peek_format(self.directory / DATABASE, _META)
        if isinstance(found, int) and found > FORMAT_VERSION:
            self.warn(f"{self.directory}: cache format {found} is newer than this tool's ({FORMAT_VERSION}); "
                      "leaving it alone and working without a cache")
            self.on_disk = False
            self._cache = MemoryCache()
            return
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
        return diskcache.Cache(str(self.directory), size_limit=64 * 2**30, timeout=60, disk=DataDisk)

    def _set_aside(self, exc: Exception) -> None:
        db = self.directory / DATABASE
        aside = f"{DATABASE}.corrupt-{os.getpid()}"
        self.warn(f"{self.directory}: cache database is unreadable ({exc}); moved it to {aside}, starting over")
        for suffix in ("", "-wal", "-shm"):
            try:
                os.replace(f"{db}{suffix}", self.directory / f"{aside}{suffix}")
            except FileNotFoundError:
                pass

    @classmethod
    def in_memory(cls) -> "Store":
        """A store whose records live in this process only (a farm worker's: what it records is sent back,
        :meth:`drain`, and written by the cook, :meth:`set_raw`)."""
        store = cls.__new__(cls)
        store.directory, store.warnings, store._pending = Path("<memory>"), [], None
        store.on_disk, store.read_only, store._cache = False, False, MemoryCache()
        return store

    def drain(self) -> dict[str, bytes]:
        """An in-memory store's records as stored (name -> bytes), taken out of it."""
        if not isinstance(self._cache, MemoryCache):
            raise TypeError("only an in-memory store is drained")
        found = {name: value for name, value in self._cache.items() if isinstance(value, bytes)}
        self._cache.clear()
        return found

    def set_raw(self, records: Mapping[str, bytes], kinds: Iterable[RecordKind]) -> int:
        """Records another store made (name -> the bytes :meth:`set` stores, :meth:`drain`), written in one
        transaction; only those of ``kinds`` (at their version): the number written."""
        # a record's canonical bytes end with its version (keys sorted: "data" first): checked without a parse
        wanted = {f"{kind.namespace}:": b',"v":%d}' % kind.version for kind in kinds}
        written = 0
        with self.batched():
            for name, value in records.items():
                namespace = name.split(":", 1)[0] + ":" if isinstance(name, str) and ":" in name else None
                if namespace in wanted and isinstance(value, bytes) and value.startswith(b'{"data":') \
                        and value.endswith(wanted[namespace]):
                    self._pending[name] = value
                    written += 1
        return written

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_format(self) -> None:
        found = self._safe_get(_META)
        if found == FORMAT_VERSION:
            return
        if found is not _MISSING or len(self._cache):
            self.warn(f"{self.directory}: cache format {found if found is not _MISSING else 'unknown'} "
                      f"is older than {FORMAT_VERSION}; starting over")
            self._cache.clear()
        self._cache.set(_META, FORMAT_VERSION)

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        warnings.warn(message, CacheWarning, stacklevel=2)

    def _safe_get(self, key: str) -> Any:
        try:
            return self._cache.get(key, default=_MISSING)
        except Exception as exc:  # unreadable entry: a miss, never a crash
            self.warn(f"{self.directory}: unreadable cache entry {key!r} ({type(exc).__name__}: {exc}); ignoring it")
            return _MISSING

    # ------------------------------------------------------------ records
    @contextlib.contextmanager
    def batched(self):
        """Records set inside are held here (and read back from here) and written together, in one
        transaction, on the way out: one unit of work (a chunk) costs one commit, not one per record.
        An exception inside drops them (the work they record did not finish)."""
        outer, self._pending = self._pending, {} if self._pending is None else self._pending
        try:
            yield self
            if outer is None and self._pending:
                transact = getattr(self._cache, "transact", None)
                with transact() if transact is not None else contextlib.nullcontext():
                    for name, value in self._pending.items():
                        self._cache.set(name, value)
        finally:
            if outer is None:
                self._pending = None

    def get(self, kind: RecordKind, key: str, default: Any = None) -> Any:
        """The data of a record, or ``default`` when absent, unreadable or of another version."""
        name = f"{kind.namespace}:{key}"
        raw = self._pending.get(name, _MISSING) if self._pending else _MISSING
        raw = self._safe_get(name) if raw is _MISSING else raw
        return default if raw is _MISSING else self._data(kind, key, raw, default)

    def get_many(self, kind: RecordKind, keys: Iterable[str]) -> dict[str, Any]:
        """What :meth:`get` gives each of ``keys`` that has a record, by key: the database asked once for
        many (a chunk's rule evaluations, a cook's job records), not once each."""
        names = {f"{kind.namespace}:{key}": key for key in keys}
        pending = self._pending or {}
        raws = {name: pending[name] for name in names if name in pending}
        raws.update(read_many(self._cache, [n for n in names if n not in raws], self._safe_get, _MISSING))
        found = {names[name]: self._data(kind, names[name], raw, _MISSING) for name, raw in raws.items()}
        return {key: data for key, data in found.items() if data is not _MISSING}

    def get_each(self, kind: RecordKind, keys: Iterable[str]) -> Iterator[tuple[str, Any]]:
        """Each of ``keys`` in order with what :meth:`get` gives it (None when absent), read a query's worth
        at a time (:meth:`get_many`): a cook's job records or reflections, a few hundred held at once."""
        keys = list(keys)
        for start in range(0, len(keys), QUERY_KEYS):
            part = keys[start:start + QUERY_KEYS]
            found = self.get_many(kind, part)
            yield from ((key, found.get(key)) for key in part)

    def _data(self, kind: RecordKind, key: str, raw: Any, default: Any) -> Any:
        try:
            doc = orjson.loads(raw)
            if doc["v"] == kind.version:
                return doc["data"]
        except (orjson.JSONDecodeError, TypeError, KeyError):
            self.warn(f"{self.directory}: unreadable {kind.namespace} record {key[:16]}; ignoring it")
        return default

    def has(self, kind: RecordKind, key: str) -> bool:
        """Whether a record of ``kind`` is stored under ``key`` (not read, so not checked)."""
        name = f"{kind.namespace}:{key}"
        if self._pending and name in self._pending:
            return True
        try:
            return name in self._cache
        except Exception:  # an unreadable database: as absent as for get()
            return False

    def present(self, kind: RecordKind, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` have a record of ``kind`` (:meth:`has` of each, the database asked once for many)."""
        return self._present({f"{kind.namespace}:{key}": key for key in keys})

    def _present(self, names: Mapping[str, str]) -> set[str]:
        """The values of ``names`` (entry name -> what the caller calls it) whose entry is stored or pending."""
        pending = self._pending or {}
        found = {key for name, key in names.items() if name in pending}
        found.update(names[name] for name in present_many(self._cache, [n for n in names if n not in pending]))
        return found

    def set(self, kind: RecordKind, key: str, data: Any) -> None:
        """Store JSON-able ``data`` (tuples become arrays) as a record of ``kind`` (held until the end of
        a :meth:`batched` block)."""
        value = canonical_bytes({"v": kind.version, "data": data})
        if self._pending is not None:
            self._pending[f"{kind.namespace}:{key}"] = value
        else:
            self._cache.set(f"{kind.namespace}:{key}", value)

    def delete(self, kind: RecordKind, key: str) -> None:
        self._cache.delete(f"{kind.namespace}:{key}")

    def keys(self, kind: RecordKind | str) -> list[str]:
        """Every key of one record kind (or ``"blob"``: every blob digest), in no particular order."""
        prefix = f"{kind if isinstance(kind, str) else kind.namespace}:"
        return [k[len(prefix):] for k in self._cache if isinstance(k, str) and k.startswith(prefix)]

    def volume(self) -> int:
        """Bytes the cache folder holds on disk (database and value files)."""
        return self._cache.volume() if isinstance(self._cache, diskcache.Cache) else 0

    # ------------------------------------------------------------ blobs
    def put_blob(self, data: bytes) -> str:
        """Store ``data`` by content; returns its SHA-256 hex digest.  Inside a :meth:`batched` block it is
        written with the block's records, in their one transaction."""
        digest = bytes_hash(data)
        if self.get_blob(digest) is None:  # absent, or corrupt (then dropped): write it
            if self._pending is not None:
                self._pending[f"blob:{digest}"] = bytes(data)
            else:
                self._cache.set(f"blob:{digest}", bytes(data))
        return digest

    def get_blob(self, digest: str) -> bytes | None:
        """The blob with this digest, or None when missing or corrupt (with a warning)."""
        name = f"blob:{digest}"
        data = self._pending.get(name, _MISSING) if self._pending else _MISSING
        data = self._safe_get(name) if data is _MISSING else data
        if data is _MISSING:
            return None
        if not isinstance(data, bytes) or bytes_hash(data) != digest:
            self.warn(f"{self.directory}: blob {digest[:12]} is corrupt; dropping it")
            self._cache.delete(f"blob:{digest}")
            return None
        return data

    def delete_blob(self, digest: str) -> None:
        if self._pending:
            self._pending.pop(f"blob:{digest}", None)
        self._cache.delete(f"blob:{digest}")

    def has_blob(self, digest: str) -> bool:
        """True when the blob is present and intact; a corrupt one is dropped (with a warning)."""
        return self.get_blob(digest) is not None

    def blobs_stored(self, digests: Iterable[str]) -> set[str]:
        """Which of ``digests`` the store has an entry for, their bytes neither read nor checked (the
        database asked once for many; an unreadable database answers none, as a read does)."""
        return self._present({f"blob:{digest}": digest for digest in digests})

