"""Why a shared cache tier failed, in a few words with what to do, and which exceptions are its failures.

A failure of the storage or the network (an ``OSError``, a timeout, or an exception
of the storage libraries: botocore, aiohttp, s3fs, fsspec...) turns the tier off
with one warning (:meth:`pipeline.cache.remote.RemoteCache._fail`); anything else
is a bug of this package and is raised.  :func:`reason` sorts the failure: no
credentials, refused credentials, a missing bucket, access denied, a timeout, an
endpoint that cannot be reached.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pipeline.errors import one_line

STORAGE_MODULES = ("botocore", "aiobotocore", "aiohttp", "s3fs", "fsspec", "urllib3", "gcsfs", "adlfs", "azure",
                    "google")


def chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def storage_failure(exc: BaseException) -> bool:
    """An error of the storage or the network (not of this package's own code)."""
    return any(isinstance(e, (OSError, TimeoutError)) or type(e).__module__.split(".")[0] in STORAGE_MODULES
               for e in chain(exc))


def error_code(exc: BaseException) -> str:
    """The S3 error code (``NoSuchBucket``, ``AccessDenied``...) behind ``exc``, if any."""
    for e in chain(exc):
        response = getattr(e, "response", None)
        if isinstance(response, dict) and isinstance(response.get("Error"), dict):
            return str(response["Error"].get("Code") or "")
    return ""


def bucket_missing(exc: BaseException) -> bool:
    return error_code(exc) == "NoSuchBucket" or "bucket does not exist" in str(exc).lower()


def class_names(exc: BaseException) -> set[str]:
    return {c.__name__ for e in chain(exc) for c in type(e).__mro__}


def endpoint(exc: BaseException, cache) -> str:
    """``http://host:port`` of the request that failed, else the configured endpoint."""
    url = next((e.kwargs.get("endpoint_url") for e in chain(exc)
                if isinstance(getattr(e, "kwargs", None), dict) and e.kwargs.get("endpoint_url")), None)
    url = url or (getattr(cache.fs, "client_kwargs", None) or {}).get("endpoint_url")
    if not url:
        return "the endpoint"
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else str(url)


def reason(exc: BaseException, cache) -> str:
    """What failed and what to do, in a few words (``cache``: the tier, for its root and endpoint)."""
    names, code = class_names(exc), error_code(exc)
    if names & {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"}:
        return "no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
    if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken"):
        return f"the credentials were refused ({code}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    if bucket_missing(exc):
        bucket = cache.root.lstrip("/").split("/", 1)[0]
        return f"bucket {bucket!r} does not exist (create it, or fix the URL)"
    if code in ("AccessDenied", "AllAccessDisabled", "Forbidden", "403") or "PermissionError" in names:
        return f"access denied ({code or one_line(str(exc))}): check that these credentials may list, read " \
               f"and write it"
    if names & {"ConnectTimeoutError", "ReadTimeoutError", "TimeoutError", "ServerTimeoutError", "FSTimeoutError"}:
        return f"no answer from {endpoint(exc, cache)} in time (a timeout): check the endpoint and the network"
    if names & {"EndpointConnectionError", "ConnectionError", "ClientConnectorError", "ConnectionRefusedError"}:
        return f"cannot connect to {endpoint(exc, cache)}: check the endpoint (endpoint_url, AWS_ENDPOINT_URL " \
               f"or FSSPEC_S3_ENDPOINT_URL) and the network"
    if isinstance(exc, OSError) and exc.strerror:
        return one_line(f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror)
    return one_line(f"{type(exc).__name__}: {exc}")
