"""Why a shared cache tier failed, sorted from real botocore exceptions, and which exceptions are storage failures."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    PartialCredentialsError,
)

from pipeline.cache.remote_failures import bucket_missing, chain, endpoint, error_code, reason, storage_failure

CACHE = SimpleNamespace(root="/team-bucket/shaders", fs=SimpleNamespace(client_kwargs={}))


def client_error(code: str, message: str = "m") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "ListObjectsV2")


def raised_from(outer: BaseException, inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer from exc
    except BaseException as got:
        return got


def test_chain_follows_causes_and_contexts_and_stops_on_a_loop() -> None:
    inner = OSError("disk")
    outer = raised_from(RuntimeError("wrapped"), inner)
    assert chain(outer) == [outer, inner]
    loop = ValueError("a")
    loop.__context__ = loop
    assert chain(loop) == [loop]


def test_storage_failures_are_os_network_and_storage_library_errors() -> None:
    assert storage_failure(OSError("x")) and storage_failure(TimeoutError())
    assert storage_failure(client_error("AccessDenied")) and storage_failure(NoCredentialsError())
    assert storage_failure(raised_from(RuntimeError("wrapped"), ConnectionResetError()))
    assert not storage_failure(ValueError("a bug of ours")) and not storage_failure(KeyError("k"))


def test_error_code_is_found_anywhere_in_the_chain() -> None:
    assert error_code(client_error("NoSuchBucket")) == "NoSuchBucket"
    assert error_code(raised_from(OSError("wrapped"), client_error("AccessDenied"))) == "AccessDenied"
    assert error_code(OSError("no response")) == ""


def test_bucket_missing_by_code_or_by_message() -> None:
    assert bucket_missing(client_error("NoSuchBucket"))
    assert bucket_missing(FileNotFoundError("The specified Bucket does not exist"))
    assert not bucket_missing(client_error("AccessDenied"))


def test_endpoint_of_the_failed_request_or_of_the_tier() -> None:
    failed = EndpointConnectionError(endpoint_url="http://10.0.0.5:9000/team-bucket?list-type=2")
    assert endpoint(failed, CACHE) == "http://10.0.0.5:9000"
    configured = SimpleNamespace(root="/b", fs=SimpleNamespace(client_kwargs={"endpoint_url": "https://s3.local/x"}))
    assert endpoint(OSError("x"), configured) == "https://s3.local"
    assert endpoint(OSError("x"), SimpleNamespace(root="/b", fs=object())) == "the endpoint"


@pytest.mark.parametrize("exc, words", [
    (NoCredentialsError(), "no AWS credentials found"),
    (PartialCredentialsError(provider="env", cred_var="AWS_SECRET_ACCESS_KEY"), "no AWS credentials found"),
    (client_error("InvalidAccessKeyId"), "the credentials were refused (InvalidAccessKeyId)"),
    (client_error("NoSuchBucket"), "bucket 'team-bucket' does not exist"),
    (client_error("AccessDenied"), "access denied (AccessDenied)"),
    (PermissionError("Forbidden"), "access denied (Forbidden)"),
    (ConnectTimeoutError(endpoint_url="http://h:1/b"), "no answer from http://h:1 in time"),
    (EndpointConnectionError(endpoint_url="http://h:2/"), "cannot connect to http://h:2"),
    (ConnectionRefusedError(111, "Connection refused"), "cannot connect to the endpoint"),
    (OSError(28, "No space left on device", "/cache/x"), "No space left on device: /cache/x"),
    (OSError(5, "I/O error"), "I/O error"),
    (RuntimeError("strange\nfailure"), "RuntimeError: strange"),
])
def test_reason_says_what_failed_and_what_to_do(exc: BaseException, words: str) -> None:
    text = reason(exc, CACHE)
    assert words in text and "\n" not in text
