"""The shared team cache: a tier behind the local store, on anything fsspec speaks.

A folder on a network share (``/mnt/share/shader-cache``, ``file://...``), S3
(``s3://bucket/prefix`` through s3fs), or any other fsspec URL.

Layout, version 1 (everything under ``<url>/v1/``; another layout version lives in
its own folder, so versions never read each other's data)::

    v1/blobs/<aa>/<sha256>        a blob's bytes, named by the SHA-256 of its content
    v1/jobs/<aa>/<job key>.json   a job record
    v1/uses/<use set>.json        a use record: the job keys one cook used, and when

``<aa>`` is the first two hex digits of the name.  Job record (JSON)::

    {"version": 1, "key": "<job key>", "blob": "<sha256>" | null, "compiler": "<identity>",
     "diagnostics": [{"file": "<path in the shader library>", "line", "col", "severity", "message"}]}

Diagnostic files are relative to the shader library, so machines with other
checkouts read the same record.  Use record (JSON)::

    {"version": 1, "time": <unix seconds>, "jobs": ["<job key>", ...]}

A use set is named by the hash of its sorted job keys: every cook of the same
content rewrites one record with a new time; ``gc`` keeps what a recent use
record names.

Rules: nothing is pickled (the cache is written by many machines and reading it
must not run code); every blob read is checked against its name (corrupt: a
miss and a warning); a record of another version or shape is a miss and a
warning.  Writes are atomic: on an object store (S3, GCS, Azure, memory) one PUT
makes the whole object appear at once; on a filesystem the bytes go to a hidden
temp name in the target folder and are renamed into place.  Blobs are written
before the record naming them.  Two machines writing one name write the same
bytes (blobs by content, records of deterministic compiles): the last one wins
harmlessly.
"""

from __future__ import annotations

import posixpath
import time
import uuid
from datetime import datetime

import fsspec
import orjson

from pipeline.cache.gc import GcResult, TierStats
from pipeline.cache.use_records import use_set_id
from pipeline.digest import bytes_hash

LAYOUT_VERSION = 1
RECORD_VERSION = 1
OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "az", "memory"})
MODES = ("read", "readwrite")


class RemoteCacheError(RuntimeError):
    """The shared cache cannot be opened (bad URL, missing filesystem driver)."""


class RemoteCache:
    """Blobs and job records on an fsspec filesystem, laid out as the module says."""

    def __init__(self, url: str, *, mode: str = "readwrite", storage_options: dict | None = None):
        if mode not in MODES:
            raise RemoteCacheError(f"remote cache mode must be one of {', '.join(MODES)}, not {mode!r}")
        try:
            self.fs, root = fsspec.core.url_to_fs(url, **(storage_options or {}))
        except (ImportError, ValueError) as exc:
            raise RemoteCacheError(f"{url}: cannot open the shared cache: {exc}") from None
        self.url, self.mode = url, mode
        self.root = posixpath.join(root.rstrip("/") or "/", f"v{LAYOUT_VERSION}")
        protocols = {self.fs.protocol} if isinstance(self.fs.protocol, str) else set(self.fs.protocol)
        self.object_store = bool(protocols & OBJECT_STORES)
        self.warnings: list[str] = []

    @property
    def writable(self) -> bool:
        return self.mode == "readwrite"

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.url}: {message}")

    # ------------------------------------------------------------ paths
    def _path(self, kind: str, name: str, suffix: str = "") -> str:
        if kind == "uses":
            return f"{self.root}/uses/{name}{suffix}"
        return f"{self.root}/{kind}/{name[:2]}/{name}{suffix}"

    def blob_path(self, digest: str) -> str:
        return self._path("blobs", digest)

    def job_path(self, key: str) -> str:
        return self._path("jobs", key, ".json")

    # ------------------------------------------------------------ reading
    def _cat(self, paths: list[str]) -> dict[str, bytes]:
        """The bytes of every path that exists (one batched request where the filesystem can)."""
        if not paths:
            return {}
        try:
            found = self.fs.cat(paths, on_error="omit")
        except (OSError, ValueError) as exc:
            self.warn(f"cannot read ({type(exc).__name__}: {exc}); treating it as empty")
            return {}
        return {p: d for p, d in found.items() if isinstance(d, bytes)}

    def get_records(self, keys) -> dict[str, dict]:
        """Job records by job key; missing, unreadable or foreign ones are left out (with a warning)."""
        wanted = {self.job_path(k): k for k in keys}
        records = {}
        for path, data in self._cat(list(wanted)).items():
            record = self._record(data, path)
            if record is not None and record.get("key") == wanted[path]:
                records[wanted[path]] = record
            elif record is not None:
                self.warn(f"{path}: record names another job; ignoring it")
        return records

    def _record(self, data: bytes, path: str) -> dict | None:
        try:
            record = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.warn(f"{path}: not JSON; ignoring it")
            return None
        if not isinstance(record, dict) or record.get("version") != RECORD_VERSION:
            self.warn(f"{path}: not a version {RECORD_VERSION} record; ignoring it")
            return None
        return record

    def get_blobs(self, digests) -> dict[str, bytes]:
        """Blobs by digest; a blob whose bytes do not hash to its name is a miss (with a warning)."""
        wanted = {self.blob_path(d): d for d in digests}
        blobs = {}
        for path, data in self._cat(list(wanted)).items():
            if bytes_hash(data) == wanted[path]:
                blobs[wanted[path]] = data
            else:
                self.warn(f"blob {wanted[path][:12]} is corrupt; ignoring it")
        return blobs

    # ------------------------------------------------------------ writing
    def _write(self, path: str, data: bytes) -> None:
        if self.object_store:
            self.fs.pipe_file(path, data)
            return
        folder, name = posixpath.split(path)
        self.fs.makedirs(folder, exist_ok=True)
        temp = f"{folder}/.{name}.tmp-{uuid.uuid4().hex}"
        self.fs.pipe_file(temp, data)
        self.fs.mv(temp, path)

    def put(self, blobs: dict[str, bytes], records: dict[str, dict]) -> None:
        """Write blobs, then the job records naming them (read mode: nothing)."""
        if not self.writable:
            return
        try:
            for digest, data in sorted(blobs.items()):
                self._write(self.blob_path(digest), data)
            for key, record in sorted(records.items()):
                self._write(self.job_path(key), orjson.dumps({"version": RECORD_VERSION, "key": key, **record},
                                                              option=orjson.OPT_SORT_KEYS))
        except OSError as exc:  # the shared tier is a convenience: the cook's own results are stored locally
            self.warn(f"cannot write back ({type(exc).__name__}: {exc}); results stay local")

    def record_use(self, job_keys, now: float | None = None) -> None:
        """Say that a cook used these jobs now (read mode: nothing)."""
        if not self.writable or not job_keys:
            return
        doc = {"version": RECORD_VERSION, "time": now if now is not None else time.time(), "jobs": sorted(job_keys)}
        try:
            self._write(self._path("uses", use_set_id(job_keys), ".json"), orjson.dumps(doc))
        except OSError as exc:
            self.warn(f"cannot record this cook's use ({type(exc).__name__}: {exc})")

    # ------------------------------------------------------------ stats and gc
    def _listing(self, kind: str) -> dict[str, dict]:
        try:
            return self.fs.find(f"{self.root}/{kind}", detail=True)
        except FileNotFoundError:
            return {}

    def _uses(self) -> dict[str, dict]:
        uses = {}
        for path, data in self._cat([p for p in self._listing("uses") if p.endswith(".json")]).items():
            record = self._record(data, path)
            if record is not None and isinstance(record.get("time"), (int, float)):
                uses[path] = record
        return uses

    def stats(self) -> TierStats:
        blobs, jobs, uses = self._listing("blobs"), self._listing("jobs"), self._uses()
        return TierStats(self.url, jobs=len(jobs), blobs=len(blobs), bytes=sum(i["size"] for i in blobs.values()),
                         uses=len(uses), last_use=max((u["time"] for u in uses.values()), default=None),
                         extra={"mode": self.mode, "layout": LAYOUT_VERSION})

    def gc(self, keep_days: float, now: float | None = None) -> GcResult:
        """Remove jobs no use record of the last ``keep_days`` names, and blobs no kept job names.

        Anything written within ``keep_days`` stays too (a cook still running has
        written blobs and records before its use record).
        """
        now = time.time() if now is None else now
        cutoff = now - keep_days * 86400
        result = GcResult(self.url, dry_run=not self.writable)
        uses = self._uses()
        keep = {k for u in uses.values() if u["time"] >= cutoff for k in u.get("jobs", ())}
        jobs = self._listing("jobs")
        doomed = [p for p, info in jobs.items()
                  if _job_key(p) not in keep and _modified(info, now) < cutoff]
        kept_records = self._cat([p for p in jobs if p not in set(doomed)])
        referenced = {r.get("blob") for p, d in kept_records.items() if (r := self._record(d, p)) is not None}
        blobs = self._listing("blobs")
        doomed_blobs = [p for p, info in blobs.items()
                        if posixpath.basename(p) not in referenced and _modified(info, now) < cutoff]
        old_uses = [p for p, u in uses.items() if u["time"] < cutoff]
        if self.writable:
            for paths in (doomed, doomed_blobs, old_uses):
                if paths:
                    self.fs.rm(paths)
        result.jobs_removed, result.blobs_removed, result.uses_removed = len(doomed), len(doomed_blobs), len(old_uses)
        result.bytes_removed = sum(blobs[p]["size"] for p in doomed_blobs)
        result.jobs_kept, result.blobs_kept = len(jobs) - len(doomed), len(blobs) - len(doomed_blobs)
        return result


def _job_key(path: str) -> str:
    return posixpath.basename(path).removesuffix(".json")


def _modified(info: dict, now: float) -> float:
    """A listing entry's modification time (local 'mtime', S3 'LastModified'); unknown: now."""
    for name in ("mtime", "LastModified", "last_modified", "created"):
        value = info.get(name)
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, (int, float)):
            return float(value)
    return now
