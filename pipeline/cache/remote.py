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
     "diagnostics": [{"file": "<path in the shader library>", "line", "col", "severity", "message"}],
     "signature": "<hex HMAC-SHA256>"}   (only under a team key)

Diagnostic files are relative to the shader library, so machines with other
checkouts read the same record.  Use record (JSON)::

    {"version": 1, "time": <unix seconds>, "jobs": ["<job key>", ...]}

A use set is named by the hash of its sorted job keys: every cook of the same
content rewrites one record with a new time; ``gc`` keeps what a recent use
record names.

Rules: nothing is pickled (the cache is written by many machines and reading it
must not run code); every blob read is checked against its name (corrupt: a
miss and a warning); a record of another version or shape (checked field by
field, :mod:`pipeline.cache.remote_records`) is a miss and a warning.  Nothing
read is trusted further: the cook checks that a blob is the output of its job
(:mod:`pipeline.compile.shared`) and never takes a failed compile from the tier.
Under a team key job records are signed and an unsigned or wrongly signed one
is a miss, counted in one warning per cook.  On a folder tier every entry is
read as a regular file within a size bound: a FIFO, a device or a symlink to
one is a miss and a warning, never a hang.  Writes are atomic: on an object store (S3, GCS, Azure, memory) one PUT
makes the whole object appear at once; on a filesystem the bytes go to a hidden
temp name in the target folder and are renamed into place.  Blobs are written
before the record naming them.  Two machines writing one name write the same
bytes (blobs by content, records of deterministic compiles): the last one wins
harmlessly.

A tier that cannot be used (no credentials, an endpoint that refuses or does not
answer, a missing bucket, access denied) fails once: the first request that fails
says why, with what to do, in one warning naming the URL; the tier is off for the
rest of this cache's life, so a cook goes on with its local cache and pays one
bounded wait, not one per job.  ``stats`` and ``gc``, whose whole job is the tier,
raise :class:`RemoteUnavailable` instead.  The first use lists the layout folder
(one request) before any batch, so a dead endpoint fails there.  S3 gets small
timeouts and few retries by default (:data:`S3_CONFIG`), overridden by fsspec's
configuration (``FSSPEC_S3_CONFIG_KWARGS='{"read_timeout": 60}'``) or by the
``config_kwargs`` of the storage options.
"""

from __future__ import annotations

import posixpath
import time
import uuid
from datetime import datetime

import fsspec
import fsspec.config
import orjson
from fsspec.implementations.local import LocalFileSystem

from pipeline.cache.gc import GcResult, TierStats
from pipeline.cache.remote_failures import bucket_missing, reason, storage_failure
from pipeline.cache.remote_records import (MAX_BLOB_BYTES, MAX_RECORD_BYTES, JobRecord, UseRecord, read_entries,
                                           shaped, signature_problem, signed)
from pipeline.cache.use_records import use_set_id
from pipeline.digest import bytes_hash
from pipeline.errors import PipelineError

LAYOUT_VERSION = 1
RECORD_VERSION = 1
OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "az", "memory"})
MODES = ("read", "readwrite")
# botocore's client settings for S3 unless fsspec's configuration or the storage options say otherwise:
# an endpoint that does not answer costs seconds, not minutes.
S3_CONFIG = {"connect_timeout": 3, "read_timeout": 10, "retries": {"max_attempts": 2, "mode": "standard"}}
S3_RETRIES = 2  # s3fs's own retries of a request that timed out (its default is 5)


class RemoteCacheError(RuntimeError):
    """The shared cache cannot be opened (bad URL, missing filesystem driver)."""


class RemoteUnavailable(PipelineError):
    """The shared cache cannot be used: no credentials, endpoint, bucket, access or timeout (one located line)."""


class RemoteCache:
    """Blobs and job records on an fsspec filesystem, laid out as the module says; ``key``: the team key
    that signs job records (:mod:`pipeline.cache.remote_records`)."""

    def __init__(self, url: str, *, mode: str = "readwrite", storage_options: dict | None = None,
                 key: bytes | None = None):
        if mode not in MODES:
            raise RemoteCacheError(f"remote cache mode must be one of {', '.join(MODES)}, not {mode!r}")
        protocol = fsspec.core.split_protocol(url)[0]
        try:
            self.fs, root = fsspec.core.url_to_fs(url, **_options(protocol, storage_options or {}))
        except (ImportError, ValueError) as exc:
            raise RemoteCacheError(f"{url}: cannot open the shared cache: {exc}") from None
        if protocol in ("s3", "s3a") and isinstance(getattr(self.fs, "retries", None), int):
            self.fs.retries = min(self.fs.retries, S3_RETRIES)  # this instance only (skip_instance_cache)
        self.url, self.mode = url, mode
        self.root = posixpath.join(root.rstrip("/") or "/", f"v{LAYOUT_VERSION}")
        protocols = {self.fs.protocol} if isinstance(self.fs.protocol, str) else set(self.fs.protocol)
        self.object_store = bool(protocols & OBJECT_STORES)
        self.local = isinstance(self.fs, LocalFileSystem)
        self.key = key
        self.unsigned = {"unsigned": 0, "wrongly signed": 0}  # job records refused under the key
        self.warnings: list[str] = []
        self.failure: str | None = None  # why the tier is off, after its first failure
        self._checked = False

    @property
    def writable(self) -> bool:
        return self.mode == "readwrite"

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.url}: {message}")

    # ------------------------------------------------------------ failures
    @property
    def usable(self) -> bool:
        """False once a request failed; the first use also checks that the tier answers."""
        if self.failure is None and not self._checked:
            self._checked = True
            try:
                self.fs.ls(self.root, detail=False)
            except FileNotFoundError as exc:  # an empty tier, unless the bucket itself is missing
                if bucket_missing(exc):
                    self._fail(exc, "read")
            except Exception as exc:  # noqa: BLE001 - sorted by storage_failure
                self._fail(exc, "read")
            else:
                self.fs.invalidate_cache(self.root)
        return self.failure is None

    def _fail(self, exc: Exception, doing: str) -> None:
        """Turn the tier off: one warning with the reason and what to do (a bug is not a tier failure)."""
        if not storage_failure(exc):
            raise exc
        if self.failure is None:
            self.failure = f"cannot {doing} the shared cache: {reason(exc, self)}"
            self.warn(f"{self.failure}; this cook goes on with the local cache only")

    def require(self) -> None:
        """For the commands whose job is the tier: raise :class:`RemoteUnavailable` if it cannot be used."""
        if not self.usable:
            raise RemoteUnavailable.at(self.url, self.failure)

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
    def _cat(self, paths: list[str], limit: int = MAX_RECORD_BYTES) -> dict[str, bytes]:
        """The bytes of every path that exists (one batched request where the filesystem can; on a folder,
        regular files of at most ``limit`` bytes)."""
        if not paths or not self.usable:
            return {}
        if self.local:
            return read_entries(paths, limit, self.warn)
        try:
            found = self.fs.cat(paths, on_error="return")
        except Exception as exc:  # noqa: BLE001 - sorted by storage_failure
            self._fail(exc, "read")
            return {}
        for value in found.values():
            if isinstance(value, Exception) and not (isinstance(value, FileNotFoundError)
                                                     and not bucket_missing(value)):
                self._fail(value, "read")
                return {}
        return {p: d for p, d in found.items() if isinstance(d, bytes)}

    def get_records(self, keys) -> dict[str, JobRecord]:
        """Job records by job key; missing, unreadable, malformed, foreign or (under a key) unsigned ones
        are left out, each with a warning (the unsigned ones counted for :meth:`signature_warning`)."""
        wanted = {self.job_path(k): k for k in keys}
        records = {}
        for path, data in sorted(self._cat(list(wanted)).items()):
            doc = self._record(data, path)
            if doc is None:
                continue
            if self.key is not None and (problem := signature_problem(doc, self.key)) is not None:
                self.unsigned[problem] += 1
                continue
            record = self._shaped(doc, path, JobRecord)
            if record is not None and record.key == wanted[path]:
                records[wanted[path]] = record
            elif record is not None:
                self.warn(f"{path}: record names another job; ignoring it")
        return records

    def signature_warning(self) -> None:
        """One warning for the job records refused under the team key since the last call, with their count."""
        refused = sum(self.unsigned.values())
        if refused:
            counts = ", ".join(f"{n} {what}" for what, n in self.unsigned.items() if n)
            self.warn(f"{refused} job record{'s' if refused != 1 else ''} not signed with the team key "
                      f"({counts}): ignored, their jobs compile here")
            self.unsigned = dict.fromkeys(self.unsigned, 0)

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

    def _shaped(self, doc: dict, path: str, kind: type):
        """``doc`` as a ``kind`` record, or None with a warning saying which field is wrong."""
        record, why = shaped(doc, kind)
        if record is None:
            self.warn(f"{path}: malformed record ({why}); ignoring it")
        return record

    def _parsed(self, data: bytes, path: str, kind: type):
        doc = self._record(data, path)
        return None if doc is None else self._shaped(doc, path, kind)

    def get_blobs(self, digests) -> dict[str, bytes]:
        """Blobs by digest; a blob whose bytes do not hash to its name is a miss (with a warning)."""
        wanted = {self.blob_path(d): d for d in digests}
        blobs = {}
        for path, data in sorted(self._cat(list(wanted), MAX_BLOB_BYTES).items()):
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

    def put(self, blobs: dict[str, bytes], records: dict[str, dict]) -> bool:
        """Write blobs, then the job records naming them; False when nothing was written (read mode, tier off)."""
        if not self.writable or not self.usable:
            return False
        try:
            for digest, data in sorted(blobs.items()):
                self._write(self.blob_path(digest), data)
            for key, record in sorted(records.items()):
                doc = signed({"version": RECORD_VERSION, "key": key, **record}, self.key)
                self._write(self.job_path(key), orjson.dumps(doc, option=orjson.OPT_SORT_KEYS))
        except Exception as exc:  # noqa: BLE001 - the cook's own results are stored locally anyway
            self._fail(exc, "write to")
            return False
        return True

    def record_use(self, job_keys, now: float | None = None) -> None:
        """Say that a cook used these jobs now (read mode or tier off: nothing)."""
        if not self.writable or not job_keys or not self.usable:
            return
        doc = {"version": RECORD_VERSION, "time": now if now is not None else time.time(), "jobs": sorted(job_keys)}
        try:
            self._write(self._path("uses", use_set_id(job_keys), ".json"), orjson.dumps(doc))
        except Exception as exc:  # noqa: BLE001 - sorted by storage_failure
            self._fail(exc, "write to")

    # ------------------------------------------------------------ stats and gc
    def _listing(self, kind: str) -> dict[str, dict]:
        try:
            return self.fs.find(f"{self.root}/{kind}", detail=True)
        except FileNotFoundError as exc:
            if bucket_missing(exc):
                raise
            return {}

    def _strict(self, work):
        """``work()`` for a command whose job is the tier: a failure is one located line, not a warning."""
        self.require()
        try:
            result = work()
        except Exception as exc:  # noqa: BLE001 - sorted by storage_failure
            self._fail(exc, "use")
            raise RemoteUnavailable.at(self.url, self.failure) from None
        self.require()  # a read inside work() may have turned the tier off
        return result

    def _uses(self) -> dict[str, UseRecord]:
        uses = {}
        for path, data in self._cat([p for p in self._listing("uses") if p.endswith(".json")]).items():
            record = self._parsed(data, path, UseRecord)
            if record is not None:
                uses[path] = record
        return uses

    def stats(self) -> TierStats:
        return self._strict(self._stats)

    def _stats(self) -> TierStats:
        blobs, jobs, uses = self._listing("blobs"), self._listing("jobs"), self._uses()
        return TierStats(self.url, jobs=len(jobs), blobs=len(blobs), bytes=sum(i["size"] for i in blobs.values()),
                         uses=len(uses), last_use=max((u.time for u in uses.values()), default=None),
                         extra={"mode": self.mode, "layout": LAYOUT_VERSION})

    def gc(self, keep_days: float, now: float | None = None) -> GcResult:
        """Remove jobs no use record of the last ``keep_days`` names, and blobs no kept job names.

        Anything written within ``keep_days`` stays too (a cook still running has
        written blobs and records before its use record).
        """
        return self._strict(lambda: self._gc(keep_days, now))

    def _gc(self, keep_days: float, now: float | None) -> GcResult:
        now = time.time() if now is None else now
        cutoff = now - keep_days * 86400
        result = GcResult(self.url, dry_run=not self.writable)
        uses = self._uses()
        keep = {k for u in uses.values() if u.time >= cutoff for k in u.jobs}
        jobs = self._listing("jobs")
        doomed = [p for p, info in jobs.items()
                  if _job_key(p) not in keep and _modified(info, now) < cutoff]
        kept_records = self._cat([p for p in jobs if p not in set(doomed)])
        referenced = {r.blob for p, d in kept_records.items() if (r := self._parsed(d, p, JobRecord)) is not None}
        blobs = self._listing("blobs")
        doomed_blobs = [p for p, info in blobs.items()
                        if posixpath.basename(p) not in referenced and _modified(info, now) < cutoff]
        old_uses = [p for p, u in uses.items() if u.time < cutoff]
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


def _options(protocol: str | None, given: dict) -> dict:
    """Storage options: a fresh filesystem instance, and for S3 the bounded :data:`S3_CONFIG` under
    fsspec's configuration and the caller's ``config_kwargs``."""
    options = {"skip_instance_cache": True, **given}
    if protocol in ("s3", "s3a"):
        configured = fsspec.config.conf.get(protocol, {}).get("config_kwargs") or {}
        options["config_kwargs"] = {**S3_CONFIG, **configured, **(given.get("config_kwargs") or {})}
    return options
