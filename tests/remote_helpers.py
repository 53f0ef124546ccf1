"""A real S3 API for the shared-cache tests: the moto server on loopback, with one bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from paths import SAMPLE_WORLD

BUCKET = "team-cache"


@pytest.fixture(scope="module")
def s3_server():
    """A moto S3 server on 127.0.0.1 (a free port), with one bucket; stopped after the module."""
    moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed")
    s3fs = pytest.importorskip("s3fs", reason="s3fs is not installed")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:  # stopped even when setting the bucket up fails
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        options = {"key": "testing", "secret": "testing",
                   "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}
        s3fs.S3FileSystem(**options, skip_instance_cache=True).call_s3("create_bucket", Bucket=BUCKET)
        yield endpoint, options
    finally:
        server.stop()


def outputs(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cook_without_tier(base: Path) -> dict[str, bytes]:
    """What a cook of the sample world with the local cache only writes (into ``base / "out"``): the
    outputs a cook through any shared tier must match."""
    result = api.cook(SAMPLE_WORLD, cache=base / "cache", out=base / "out", scheduler="none")
    assert result.errors == [] and result.warnings == []
    return outputs(base / "out")
