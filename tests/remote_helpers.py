"""A real S3 API for the shared-cache tests: the moto server on loopback, with one bucket."""

from __future__ import annotations

import pytest

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
