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
from urllib.parse import urlsplit

import fsspec
import fsspec.config
import orjson

from pipeline.cache.gc import GcResult, TierStats
from pipeline.cache.use_records import use_set_id
from pipeline.digest import bytes_hash
from pipeline.errors import PipelineError, one_line

LAYOUT_VERSION = 1
RECORD_VERSION = 1
OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "az", "memory"})
MODES = ("read", "readwrite")
# botocore's client settings for S3 unless fsspec's configuration or the storage options say otherwise:
# an endpoint that does not answer costs seconds, not minutes.
S3_CONFIG = {"connect_timeout": 3, "read_timeout": 10, "retries": {"max_attempts": 2, "mode": "standard"}}
S3_RETRIES = 2  # s3fs's own retries of a request that timed out (its default is 5)
_STORAGE_MODULES = ("botocore", "aiobotocore", "aiohttp", "s3fs", "fsspec", "urllib3", "gcsfs", "adlfs", "azure",
                    "google")


class RemoteCacheError(RuntimeError):
    """The shared cache cannot be opened (bad URL, missing filesystem driver)."""


class RemoteUnavailable(PipelineError):
    """The shared cache cannot be used: no credentials, endpoint, bucket, access or timeout (one located line)."""


class RemoteCache:
    """Blobs and job records on an fsspec filesystem, laid out as the module says."""

    def __init__(self, url: str, *, mode: str = "readwrite", storage_options: dict | None = None):
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
                if _bucket_missing(exc):
                    self._fail(exc, "read")
            except Exception as exc:  # noqa: BLE001 - sorted by _storage_failure
                self._fail(exc, "read")
            else:
                self.fs.invalidate_cache(self.root)
        return self.failure is None

    def _fail(self, exc: Exception, doing: str) -> None:
        """Turn the tier off: one warning with the reason and what to do (a bug is not a tier failure)."""
        if not _storage_failure(exc):
            raise exc
        if self.failure is None:
            self.failure = f"cannot {doing} the shared cache: {_reason(exc, self)}"
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
    def _cat(self, paths: list[str]) -> dict[str, bytes]:
        """The bytes of every path that exists (one batched request where the filesystem can)."""
        if not paths or not self.usable:
            return {}
        try:
            found = self.fs.cat(paths, on_error="return")
        except Exception as exc:  # noqa: BLE001 - sorted by _storage_failure
            self._fail(exc, "read")
            return {}
        for value in found.values():
            if isinstance(value, Exception) and not (isinstance(value, FileNotFoundError)
                                                     and not _bucket_missing(value)):
                self._fail(value, "read")
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

    def put(self, blobs: dict[str, bytes], records: dict[str, dict]) -> bool:
        """Write blobs, then the job records naming them; False when nothing was written (read mode, tier off)."""
        if not self.writable or not self.usable:
            return False
        try:
            for digest, data in sorted(blobs.items()):
                self._write(self.blob_path(digest), data)
            for key, record in sorted(records.items()):
                self._write(self.job_path(key), orjson.dumps({"version": RECORD_VERSION, "key": key, **record},
                                                              option=orjson.OPT_SORT_KEYS))
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
        except Exception as exc:  # noqa: BLE001 - sorted by _storage_failure
            self._fail(exc, "write to")

    # ------------------------------------------------------------ stats and gc
    def _listing(self, kind: str) -> dict[str, dict]:
        try:
            return self.fs.find(f"{self.root}/{kind}", detail=True)
        except FileNotFoundError as exc:
            if _bucket_missing(exc):
                raise
            return {}

    def _strict(self, work):
        """``work()`` for a command whose job is the tier: a failure is one located line, not a warning."""
        self.require()
        try:
            result = work()
        except Exception as exc:  # noqa: BLE001 - sorted by _storage_failure
            self._fail(exc, "use")
            raise RemoteUnavailable.at(self.url, self.failure) from None
        self.require()  # a read inside work() may have turned the tier off
        return result

    def _uses(self) -> dict[str, dict]:
        uses = {}
        for path, data in self._cat([p for p in self._listing("uses") if p.endswith(".json")]).items():
            record = self._record(data, path)
            if record is not None and isinstance(record.get("time"), (int, float)):
                uses[path] = record
        return uses

    def stats(self) -> TierStats:
        return self._strict(self._stats)

    def _stats(self) -> TierStats:
        blobs, jobs, uses = self._listing("blobs"), self._listing("jobs"), self._uses()
        return TierStats(self.url, jobs=len(jobs), blobs=len(blobs), bytes=sum(i["size"] for i in blobs.values()),
                         uses=len(uses), last_use=max((u["time"] for u in uses.values()), default=None),
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


def _options(protocol: str | None, given: dict) -> dict:
    """Storage options: a fresh filesystem instance, and for S3 the bounded :data:`S3_CONFIG` under
    fsspec's configuration and the caller's ``config_kwargs``."""
    options = {"skip_instance_cache": True, **given}
    if protocol in ("s3", "s3a"):
        configured = fsspec.config.conf.get(protocol, {}).get("config_kwargs") or {}
        options["config_kwargs"] = {**S3_CONFIG, **configured, **(given.get("config_kwargs") or {})}
    return options


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _storage_failure(exc: BaseException) -> bool:
    """An error of the storage or the network (not of this package's own code)."""
    return any(isinstance(e, (OSError, TimeoutError)) or type(e).__module__.split(".")[0] in _STORAGE_MODULES
               for e in _chain(exc))


def _code(exc: BaseException) -> str:
    """The S3 error code (``NoSuchBucket``, ``AccessDenied``...) behind ``exc``, if any."""
    for e in _chain(exc):
        response = getattr(e, "response", None)
        if isinstance(response, dict) and isinstance(response.get("Error"), dict):
            return str(response["Error"].get("Code") or "")
    return ""


def _bucket_missing(exc: BaseException) -> bool:
    return _code(exc) == "NoSuchBucket" or "bucket does not exist" in str(exc).lower()


def _names(exc: BaseException) -> set[str]:
    return {c.__name__ for e in _chain(exc) for c in type(e).__mro__}


def _endpoint(exc: BaseException, cache: RemoteCache) -> str:
    """``http://host:port`` of the request that failed, else the configured endpoint."""
    url = next((e.kwargs.get("endpoint_url") for e in _chain(exc)
                if isinstance(getattr(e, "kwargs", None), dict) and e.kwargs.get("endpoint_url")), None)
    url = url or (getattr(cache.fs, "client_kwargs", None) or {}).get("endpoint_url")
    if not url:
        return "the endpoint"
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else str(url)


def _reason(exc: BaseException, cache: RemoteCache) -> str:
    """What failed and what to do, in a few words."""
    names, code = _names(exc), _code(exc)
    if names & {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"}:
        return "no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
    if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken"):
        return f"the credentials were refused ({code}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    if _bucket_missing(exc):
        bucket = cache.root.lstrip("/").split("/", 1)[0]
        return f"bucket {bucket!r} does not exist (create it, or fix the URL)"
    if code in ("AccessDenied", "AllAccessDisabled", "Forbidden", "403") or "PermissionError" in names:
        return f"access denied ({code or one_line(str(exc))}): check that these credentials may list, read " \
               f"and write it"
    if names & {"ConnectTimeoutError", "ReadTimeoutError", "TimeoutError", "ServerTimeoutError", "FSTimeoutError"}:
        return f"no answer from {_endpoint(exc, cache)} in time (a timeout): check the endpoint and the network"
    if names & {"EndpointConnectionError", "ConnectionError", "ClientConnectorError", "ConnectionRefusedError"}:
        return f"cannot connect to {_endpoint(exc, cache)}: check the endpoint (endpoint_url, AWS_ENDPOINT_URL " \
               f"or FSSPEC_S3_ENDPOINT_URL) and the network"
    if isinstance(exc, OSError) and exc.strerror:
        return one_line(f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror)
    return one_line(f"{type(exc).__name__}: {exc}")
