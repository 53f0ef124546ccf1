"""A shared cache that cannot be used: one warning naming the URL, the cook goes on with its local cache.

Against the real moto S3 server on loopback (the fixture of remote_helpers.py), an
endpoint where nothing listens, one that accepts connections and never answers, a cook
without credentials (real processes) and a missing bucket.  ``pipeline cache stats|gc``
on such a tier: one located line, exit 1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import fsspec.config
import orjson
import pytest
from remote_helpers import BUCKET, cook_without_tier, outputs, s3_server  # noqa: F401  (the moto fixture)

from pipeline import api
from pipeline.cache.remote import S3_CONFIG, RemoteCache, RemoteUnavailable
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MODES = ["read", "readwrite"]


@pytest.fixture(scope="module")
def local_outputs(tmp_path_factory) -> dict[str, bytes]:
    """What a cook with the local cache only writes."""
    return cook_without_tier(tmp_path_factory.mktemp("local"))


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def s3_options(endpoint: str, **extra) -> dict:
    return {"key": "testing", "secret": "testing", **extra,
            "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}


def cook_against(tmp_path: Path, url: str, options: dict, mode: str):
    return api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "out", remote_cache=url,
                    remote_cache_mode=mode, remote_options=options, scheduler="none")


def assert_local_cook(result, tmp_path: Path, local_outputs: dict, url: str, reason: str) -> None:
    """Everything compiled here, nothing written back, one warning naming the URL and the reason."""
    assert result.errors == [] and len(result.run.compiled) == len(result.plan.jobs) > 0
    assert result.run.fetched == [] and result.remote["written_back"] == 0
    assert [w for w in result.warnings if url in w] == result.warnings and len(result.warnings) == 1
    assert reason in result.warnings[0] and "local cache only" in result.warnings[0]
    assert outputs(tmp_path / "out") == local_outputs


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_nothing_listens_on_the_endpoint(tmp_path: Path, local_outputs, mode: str) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    url = f"s3://{BUCKET}/dead"
    result = cook_against(tmp_path, url, s3_options(endpoint), mode)
    assert_local_cook(result, tmp_path, local_outputs, url, f"cannot connect to {endpoint}: check the endpoint")


@pytest.mark.parametrize("mode", MODES)
def test_missing_bucket(tmp_path: Path, local_outputs, s3_server, mode: str) -> None:  # noqa: F811
    endpoint, _ = s3_server
    url = "s3://no-such-bucket/shaders"
    result = cook_against(tmp_path, url, s3_options(endpoint), mode)
    assert_local_cook(result, tmp_path, local_outputs, url, "bucket 'no-such-bucket' does not exist (create it")


@pytest.mark.slow
def test_endpoint_that_never_answers_costs_one_request_not_one_per_job(tmp_path: Path, local_outputs) -> None:
    """A server that accepts connections and never replies: the first request times out and the tier is
    off; the number of connections it saw is bounded by the retries, not by the number of jobs."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.getsockname()[1]}"
    url = f"s3://{BUCKET}/silent"
    try:
        result = cook_against(tmp_path, url, s3_options(endpoint, config_kwargs={"read_timeout": 1}), "readwrite")
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert_local_cook(result, tmp_path, local_outputs, url, f"no answer from {endpoint} in time (a timeout)")
    # the one listing that finds the tier dead, with its retries (2 s3fs tries of up to 3 requests each)
    assert 0 < len(held) <= 6 < len(result.plan.jobs)


def _no_credentials_env(tmp_path: Path, endpoint: str) -> dict:
    """The environment without AWS credentials: no variables, empty credential and config files, no
    instance metadata; the endpoint through fsspec's configuration."""
    empty = tmp_path / "empty"
    empty.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FSSPEC_"))}
    return {**env, "AWS_SHARED_CREDENTIALS_FILE": str(empty), "AWS_CONFIG_FILE": str(empty),
            "AWS_EC2_METADATA_DISABLED": "true", "FSSPEC_S3_ENDPOINT_URL": endpoint,
            "AWS_DEFAULT_REGION": "us-east-1", "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_cook_without_credentials_as_a_user_runs_it(tmp_path: Path, local_outputs, s3_server, mode) -> None:  # noqa: F811
    endpoint, _ = s3_server
    url = f"s3://{BUCKET}/nocreds"
    env = _no_credentials_env(tmp_path, endpoint)
    args = [sys.executable, "-m", "pipeline", "cook", str(SAMPLE), "--cache", "cache", "--out", "out",
            "--remote-cache", url, "--remote-cache-mode", mode, "--scheduler", "none", "-q"]
    run = subprocess.run([*args, "--json"] if mode == "readwrite" else args, capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    warning = f"{url}: cannot read the shared cache: no AWS credentials found (set AWS_ACCESS_KEY_ID and " \
              f"AWS_SECRET_ACCESS_KEY, or AWS_PROFILE); this cook goes on with the local cache only"
    if mode == "readwrite":  # --json: the warning is among the document's warnings
        doc = orjson.loads(run.stdout)
        assert doc["warnings"] == [warning] and doc["errors"] == [] and run.stderr == ""
        assert doc["compiled"] == doc["jobs"] > 0 and doc["remote"]["written_back"] == 0
    else:
        assert run.stderr.splitlines() == [f"warning: {warning}"]
    assert outputs(tmp_path / "out") == local_outputs


@pytest.mark.slow
@pytest.mark.parametrize("command", [["stats"], ["gc", "--keep-days", "1"]])
def test_cache_commands_on_an_unreachable_tier_are_one_located_line(tmp_path: Path, command) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    url = f"s3://{BUCKET}/dead"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "FSSPEC_S3_ENDPOINT_URL": endpoint, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "pipeline", "cache", *command, "--cache", "cache",
                          "--remote-cache", url], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.splitlines() == [f"{url}: error: cannot read the shared cache: cannot connect to {endpoint}: "
                                       f"check the endpoint (endpoint_url, AWS_ENDPOINT_URL or "
                                       f"FSSPEC_S3_ENDPOINT_URL) and the network"]


def test_stats_on_a_missing_bucket_raises(s3_server) -> None:  # noqa: F811
    endpoint, _ = s3_server
    cache = RemoteCache("s3://no-such-bucket/x", mode="read", storage_options=s3_options(endpoint))
    with pytest.raises(RemoteUnavailable) as caught:
        cache.stats()
    assert str(caught.value) == "s3://no-such-bucket/x: error: cannot read the shared cache: bucket " \
                                "'no-such-bucket' does not exist (create it, or fix the URL)"


def test_s3_timeouts_are_bounded_and_overridable(monkeypatch) -> None:
    plain = RemoteCache(f"s3://{BUCKET}/x", storage_options=s3_options("http://127.0.0.1:9"))
    assert plain.fs.config_kwargs == S3_CONFIG and plain.fs.retries == 2
    monkeypatch.setitem(fsspec.config.conf, "s3", {"config_kwargs": {"read_timeout": 60}})
    configured = RemoteCache(f"s3://{BUCKET}/x", storage_options=s3_options("http://127.0.0.1:9"))
    assert configured.fs.config_kwargs == {**S3_CONFIG, "read_timeout": 60}
    given = RemoteCache(f"s3://{BUCKET}/x", storage_options=s3_options(
        "http://127.0.0.1:9", config_kwargs={"read_timeout": 5, "connect_timeout": 1}))
    assert given.fs.config_kwargs == {**S3_CONFIG, "read_timeout": 5, "connect_timeout": 1}


def test_a_failed_write_turns_write_back_off_with_one_warning(tmp_path: Path, monkeypatch) -> None:
    """A folder tier that reads but refuses writes: one warning, then no more attempts."""
    share = tmp_path / "share"
    cache = RemoteCache(str(share))
    attempts = []

    def refuse(path, data, **kwargs):
        attempts.append(path)
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(cache.fs, "pipe_file", refuse)
    assert cache.get_records(["ab" * 32]) == {}
    assert cache.put({"cd" * 32: b"one"}, {}) is False and cache.put({"ef" * 32: b"two"}, {}) is False
    cache.record_use(["ab" * 32])
    assert len(attempts) == 1 and len(cache.warnings) == 1
    assert cache.warnings[0].startswith(f"{share}: cannot write to the shared cache: access denied (")
