"""Where the store's records live: diskcache restricted to plain data (:class:`DataDisk`), a read-only
look at its database (:class:`ReadOnlyCache`), memory alone (:class:`MemoryCache`), and records read
many at a time (:func:`read_many`)."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import diskcache

QUERY_KEYS = 500  # keys per query (SQLite allows 32766 parameters; a smaller IN list plans as well)


class UnsafeEntry(Exception):
    """A stored key or value that is not plain data (a pickle): never loaded."""


class DataDisk(diskcache.Disk):
    """diskcache's storage, restricted to plain data: str/bytes/int/float, never pickles."""

    def put(self, key):
        if type(key) not in (str, bytes):
            raise TypeError(f"cache keys are strings, not {type(key).__name__}")
        return super().put(key)

    def get(self, key, raw):
        if not raw:
            raise UnsafeEntry("a pickled key")
        return super().get(key, raw)

    def store(self, value, read, key=diskcache.core.UNKNOWN):
        if read or type(value) not in (bytes, str, int, float):
            raise TypeError(f"cache values are bytes, str or numbers, not {type(value).__name__}")
        return super().store(value, read, key)

    def fetch(self, mode, filename, value, read):
        if mode == diskcache.core.MODE_PICKLE:
            raise UnsafeEntry("a pickled value")
        return super().fetch(mode, filename, value, read)


def peek_format(database: Path, key: str) -> Any:
    """The value of ``key`` (the format) a cache database records, read without opening it for writing
    (None: unknown)."""
    if not database.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM Cache WHERE key = ? AND raw = 1", (key,)).fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


class ReadOnlyCache(dict):
    """The database read through a plain SQLite connection (no settings written, no file made);
    what is set or deleted stays in memory (``GONE`` marks a deletion)."""

    def __init__(self, database: Path):
        super().__init__()
        self._db = None
        self._disk = DataDisk(str(database.parent))
        if database.is_file():
            self._db = sqlite3.connect(f"{database.absolute().as_uri()}?mode=rw", uri=True, timeout=60,
                                       isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA query_only = 1")

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            value = super().get(key)
            return default if value is GONE else value
        if self._db is None:
            return default
        row = self._db.execute("SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1",
                               (key,)).fetchone()
        return default if row is None else self._disk.fetch(row[0], row[1], row[2], False)

    def __contains__(self, key) -> bool:
        """Set here (and not deleted since), else stored in the database."""
        if dict.__contains__(self, key):
            return dict.get(self, key) is not GONE
        return self._db is not None and self._db.execute(
            "SELECT 1 FROM Cache WHERE key = ? AND raw = 1", (key,)).fetchone() is not None

    def set(self, key, value) -> None:
        self[key] = value

    def delete(self, key) -> None:
        self[key] = GONE

    def __iter__(self):
        stored = [] if self._db is None else [k for (k,) in self._db.execute(
            "SELECT key FROM Cache WHERE raw = 1 ORDER BY rowid")]
        mine = dict.keys(self)
        yield from (k for k in dict.fromkeys([*stored, *mine]) if dict.get(self, k) is not GONE)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


GONE = object()


class MemoryCache(dict):
    """Stands in for the database while a newer tool's cache is left alone."""

    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value) -> None:
        self[key] = value

    def delete(self, key) -> None:
        self.pop(key, None)

    def close(self) -> None:
        pass


def present_many(cache: Any, names: Sequence[str]) -> set[str]:
    """Which of ``names`` are stored (not read, so not checked: as ``name in cache``).  A diskcache database
    is asked once per :data:`QUERY_KEYS` names; any other cache, or a query that fails, one name at a time
    (a name that cannot be asked for is absent)."""
    if isinstance(cache, diskcache.Cache):
        try:
            return {key for (key,) in _rows(cache, "key", names)}
        except sqlite3.Error:
            pass
    found = set()
    for name in names:
        with contextlib.suppress(Exception):  # an unreadable database: absent, as for a read
            if name in cache:
                found.add(name)
    return found


def _rows(cache: diskcache.Cache, columns: str, names: Sequence[str]) -> Iterator[tuple]:
    """The ``columns`` of the rows of ``names`` in a diskcache database (string keys, the expired left
    out), one query per :data:`QUERY_KEYS` names; sqlite3.Error when a query fails."""
    for start in range(0, len(names), QUERY_KEYS):
        part = names[start:start + QUERY_KEYS]
        yield from cache._sql(f"SELECT {columns} FROM Cache WHERE raw = 1 AND key IN ({','.join('?' * len(part))}) "
                              "AND (expire_time IS NULL OR expire_time > ?)", (*part, time.time())).fetchall()


def read_many(cache: Any, names: Sequence[str], one: Callable[[str], Any], missing: Any) -> dict[str, Any]:
    """The stored values of ``names`` that are present, by name.  A diskcache database is asked once per
    :data:`QUERY_KEYS` names (as its ``get`` asks for one, the expired left out; this store's eviction
    policy records no access).  Any other cache, a query that fails and an entry that does not load go
    through ``one(name)``, which answers ``missing`` for an absent or unreadable entry (and says why)."""
    found: dict[str, Any] = {}
    rest = list(names)
    if isinstance(cache, diskcache.Cache) and not cache.statistics \
            and diskcache.core.EVICTION_POLICY[cache.eviction_policy]["get"] is None:
        failed: list[str] = []
        try:
            for key, mode, filename, value in _rows(cache, "key, mode, filename, value", names):
                try:
                    found[key] = cache._disk.fetch(mode, filename, value, False)
                except (OSError, UnsafeEntry):  # its file gone meanwhile, or a pickle: asked alone
                    failed.append(key)
            rest = failed
        except sqlite3.Error:  # asked one by one, as get() would
            found = {}
    for name in rest:
        value = one(name)
        if value is not missing:
            found[name] = value
    return found
