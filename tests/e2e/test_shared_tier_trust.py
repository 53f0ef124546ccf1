"""A shared cache tier can never ship a wrong shader, and its failures are clean.

A folder tier filled by one real cook is tampered with as a hostile or broken
machine would: a blob of junk named by its own digest, another stage's blob in a
record, a failed compile recorded for a job that compiles, a FIFO or a symlink to
``/dev/zero`` as an entry, a record whose blob field is a list or a mapping,
unsigned and tampered records under a team key.  An S3 tier (the moto server on
loopback, behind a small proxy that stops answering at a chosen point) dies in the
middle of a cook.  Each time the ``pipeline cook`` command (a real process, bounded
by a timeout so that a hang fails the test) exits 0 with at most one warning line,
its outputs are byte-identical to a cook without the tier, and a second cook from
the same local cache without the tier gives them again: nothing bad was stored.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import shutil
import struct
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
from remote_helpers import BUCKET, cook_without_tier, outputs, s3_server  # noqa: F401  (the moto fixture)

from pipeline import api
from pipeline.cache.remote import RemoteCache
from pipeline.digest import canonical_bytes
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
KEY = "team secret for the shader cache"
TIMEOUT = 120  # seconds for one cook process: a read that hangs fails the test instead of hanging it


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, bytes]:
    """What a cook without any shared tier writes."""
    return cook_without_tier(tmp_path_factory.mktemp("clean"))


def fill(base: Path, key: str | None):
    """A folder tier holding every job of the sample world, written by one real cook (signed under ``key``)."""
    with pytest.MonkeyPatch.context() as patch:
        if key is None:
            patch.delenv("PIPELINE_CACHE_KEY", raising=False)
        else:
            patch.setenv("PIPELINE_CACHE_KEY", key)
        result = api.cook(SAMPLE, cache=base / "cache", out=base / "out", remote_cache=str(base / "tier"),
                          scheduler="none")
    assert result.errors == [] and result.remote["written_back"] == len(result.plan.jobs) > 0
    return base / "tier", result


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    return fill(tmp_path_factory.mktemp("filled"), None)


@pytest.fixture(scope="module")
def filled_signed(tmp_path_factory):
    return fill(tmp_path_factory.mktemp("signed"), KEY)


def copy_tier(tier: Path, tmp_path: Path) -> tuple[Path, RemoteCache]:
    copy = tmp_path / "tier"
    shutil.copytree(tier, copy, symlinks=True)
    return copy, RemoteCache(str(copy))


def job_of(result, stage: str) -> str:
    """The first job key (sorted) of ``stage``."""
    return next(k for k, j in sorted(result.plan.jobs.items()) if j.request.stage == stage)


def edit_record(cache: RemoteCache, key: str, **fields) -> None:
    path = Path(cache.job_path(key))
    path.write_bytes(orjson.dumps({**orjson.loads(path.read_bytes()), **fields}, option=orjson.OPT_SORT_KEYS))


def env(**extra) -> dict:
    base = {k: v for k, v in os.environ.items() if k != "PIPELINE_CACHE_KEY"}
    return {**base, "PYTHONPATH": str(ROOT), **extra}


def cook_cli(tmp_path: Path, remote: str, environment: dict | None = None, json: bool = False):
    args = [sys.executable, "-m", "pipeline", "cook", str(SAMPLE), "--cache", "cache", "--out", "out",
            "--remote-cache", remote, "--scheduler", "none", "-q", *(["--json"] if json else [])]
    return subprocess.run(args, capture_output=True, text=True, env=environment or env(), cwd=tmp_path,
                          timeout=TIMEOUT)


def assert_clean_cook(tmp_path: Path, run, clean: dict, *warning_parts: str) -> None:
    """Exit 0, no traceback, one warning line holding ``warning_parts`` (none without parts), the outputs
    of a cook without the tier; then the same outputs again from the local cache alone."""
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    if warning_parts:
        assert len(lines) == 1 and lines[0].startswith("warning: "), run.stderr
        assert all(part in lines[0] for part in warning_parts), lines[0]
    else:
        assert lines == []
    assert outputs(tmp_path / "out") == clean
    again = api.cook(SAMPLE, cache=tmp_path / "cache", out=tmp_path / "again", scheduler="none")
    assert again.errors == [] and again.warnings == [] and again.run.compiled == []
    assert outputs(tmp_path / "again") == clean


# ------------------------------------------------------------ poisoned blobs and records
@pytest.mark.slow
def test_junk_named_by_its_own_digest_is_not_used(tmp_path: Path, filled, clean) -> None:
    tier, first = filled
    tier, cache = copy_tier(tier, tmp_path)
    junk = struct.pack("<5I", 0x07230203, 0x00010500, 0, 1, 0) + bytes(range(64))  # a SPIR-V header, then junk
    digest = hashlib.sha256(junk).hexdigest()
    Path(cache.blob_path(digest)).parent.mkdir(parents=True, exist_ok=True)
    Path(cache.blob_path(digest)).write_bytes(junk)
    victim = job_of(first, "fragment")
    edit_record(cache, victim, blob=digest)
    run = cook_cli(tmp_path, str(tier))
    assert_clean_cook(tmp_path, run, clean, f"warning: {tier}: job {victim[:12]} (", f"blob {digest[:12]} is not "
                      "its output: no fragment entry point", "it compiles here")
    with api.open_store(tmp_path / "cache") as store:
        assert not store.has_blob(digest)


def test_another_stages_blob_is_not_used(tmp_path: Path, filled, clean) -> None:
    tier, first = filled
    tier, cache = copy_tier(tier, tmp_path)
    victim, donor = job_of(first, "vertex"), job_of(first, "fragment")
    edit_record(cache, victim, blob=first.run.results[donor].blob)
    run = cook_cli(tmp_path, str(tier), json=True)
    assert run.returncode == 0, run.stderr
    doc = orjson.loads(run.stdout)
    assert doc["compiled"] == 1 and doc["fetched"] == doc["jobs"] - 1 and doc["errors"] == []
    assert len(doc["warnings"]) == 1 and doc["warnings"][0].startswith(f"{tier}: job {victim[:12]} (")
    assert "is not its output: no vertex entry point" in doc["warnings"][0]
    assert outputs(tmp_path / "out") == clean


def test_a_recorded_failure_is_never_trusted(tmp_path: Path, filled, clean) -> None:
    """A record saying the compile failed: the job compiles here (and succeeds); nothing of it is kept."""
    tier, first = filled
    tier, cache = copy_tier(tier, tmp_path)
    victim = job_of(first, "fragment")
    edit_record(cache, victim, blob=None, diagnostics=[{"file": "pbr/pbr.frag", "line": 1, "col": 1,
                                                        "severity": "error", "message": "no such thing"}])
    run = cook_cli(tmp_path, str(tier), json=True)
    assert run.returncode == 0, run.stderr
    doc = orjson.loads(run.stdout)
    assert doc["compiled"] == 1 and doc["errors"] == [] and doc["warnings"] == []
    assert_clean_cook(tmp_path, run, clean)


@pytest.mark.parametrize("blob", [["ab" * 32], {"digest": "ab" * 32}], ids=["list", "dict"])
def test_a_record_of_the_wrong_shape_is_a_miss(tmp_path: Path, filled, clean, blob) -> None:
    tier, first = filled
    tier, cache = copy_tier(tier, tmp_path)
    victim = job_of(first, "vertex")
    edit_record(cache, victim, blob=blob)
    run = cook_cli(tmp_path, str(tier))
    assert_clean_cook(tmp_path, run, clean, f"warning: {tier}: {cache.job_path(victim)}: malformed record (",
                      "at `$.blob`); ignoring it")


@pytest.mark.parametrize("entry", ["record", "blob"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_file_in_a_folder_tier_is_a_miss_not_a_hang(tmp_path: Path, filled, clean, entry, kind) -> None:
    tier, first = filled
    tier, cache = copy_tier(tier, tmp_path)
    victim = job_of(first, "fragment")
    path = Path(cache.job_path(victim) if entry == "record" else cache.blob_path(first.run.results[victim].blob))
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    run = cook_cli(tmp_path, str(tier))
    what = "a FIFO" if kind == "fifo" else "a device"
    assert_clean_cook(tmp_path, run, clean, f"warning: {tier}: {path}: cannot read: not a regular file ({what})")


# ------------------------------------------------------------ signed records
def test_correctly_signed_records_are_hits(tmp_path: Path, filled_signed, clean) -> None:
    tier, first = filled_signed
    tier, cache = copy_tier(tier, tmp_path)
    key = sorted(first.plan.jobs)[0]
    doc = orjson.loads(Path(cache.job_path(key)).read_bytes())
    body = {k: v for k, v in doc.items() if k != "signature"}
    assert doc["signature"] == hmac.new(KEY.encode(), canonical_bytes(body), hashlib.sha256).hexdigest()
    run = cook_cli(tmp_path, str(tier), env(PIPELINE_CACHE_KEY=KEY), json=True)
    assert run.returncode == 0, run.stderr
    result = orjson.loads(run.stdout)
    assert result["compiled"] == 0 and result["fetched"] == result["jobs"] and result["warnings"] == []
    assert outputs(tmp_path / "out") == clean


def test_unsigned_records_under_a_key_are_misses_with_one_warning(tmp_path: Path, filled, clean) -> None:
    tier, first = filled
    tier, _ = copy_tier(tier, tmp_path)
    jobs = len(first.plan.jobs)
    run = cook_cli(tmp_path, str(tier), env(PIPELINE_CACHE_KEY=KEY))
    assert_clean_cook(tmp_path, run, clean, f"warning: {tier}: {jobs} job records not signed with the team key "
                      f"({jobs} unsigned): ignored, their jobs compile here")


@pytest.mark.parametrize("how", ["tampered", "other key"])
def test_wrongly_signed_records_are_misses_with_one_warning(tmp_path: Path, filled_signed, clean, how) -> None:
    """A record changed after signing (its blob swapped for another valid blob of its stage, which no blob check
    can tell apart), or signed with another key."""
    tier, first = filled_signed
    tier, cache = copy_tier(tier, tmp_path)
    frag = sorted(k for k, j in first.plan.jobs.items() if j.request.stage == "fragment")
    victim = next(k for k in frag if first.run.results[k].blob != first.run.results[frag[0]].blob)
    doc = orjson.loads(Path(cache.job_path(victim)).read_bytes())
    if how == "tampered":
        doc["blob"] = first.run.results[frag[0]].blob
    else:
        body = {k: v for k, v in doc.items() if k != "signature"}
        doc["signature"] = hmac.new(b"another team", canonical_bytes(body), hashlib.sha256).hexdigest()
    Path(cache.job_path(victim)).write_bytes(orjson.dumps(doc))
    run = cook_cli(tmp_path, str(tier), env(PIPELINE_CACHE_KEY=KEY))
    assert_clean_cook(tmp_path, run, clean, f"warning: {tier}: 1 job record not signed with the team key "
                      "(1 wrongly signed): ignored, their jobs compile here")


def test_the_key_comes_from_the_key_file_of_pipeline_toml(tmp_path: Path, filled_signed, clean) -> None:
    tier, _ = filled_signed
    tier, _ = copy_tier(tier, tmp_path)
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    (world / "team.key").write_text(KEY + "\n")
    (world / "pipeline.toml").write_text(f'[cache]\nremote = "{tier}"\nkey_file = "team.key"\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PIPELINE_CACHE_KEY", raising=False)
        result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", scheduler="none")
        assert result.run.compiled == [] and result.warnings == [] and outputs(tmp_path / "out") == clean
        (world / "team.key").write_text("not the key\n")
        other = api.cook(world, cache=tmp_path / "cache2", out=tmp_path / "out2", scheduler="none")
        assert len(other.run.compiled) == len(other.plan.jobs) and len(other.warnings) == 1
        assert "wrongly signed" in other.warnings[0] and outputs(tmp_path / "out2") == clean
    (world / "team.key").unlink()
    os.mkfifo(world / "team.key")
    run = subprocess.run([sys.executable, "-m", "pipeline", "cook", "world", "--cache", "cache3", "--out",
                          "out3", "--scheduler", "none", "-q"], capture_output=True, text=True, env=env(),
                         cwd=tmp_path, timeout=TIMEOUT)
    assert run.returncode == 1 and run.stderr.splitlines() == [
        f"{(world / 'team.key').resolve()}: error: cannot read the team cache key (cache.key_file): "
        "not a regular file (a FIFO)"]


# ------------------------------------------------------------ an S3 tier that dies mid-cook
class DyingProxy:
    """An HTTP proxy on loopback in front of the moto server that forwards requests until ``dies(method, path,
    count)`` says so; from then on it answers nothing (the connection is closed) and stops listening."""

    def __init__(self, target: str, dies) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target, self.dies, self.seen, self.dead = (host, int(port)), dies, 0, False
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def forward(self) -> None:
                with proxy.lock:
                    proxy.seen += 1
                    if not proxy.dead and proxy.dies(self.command, self.path, proxy.seen):
                        proxy.dead = True
                        threading.Thread(target=proxy.close, daemon=True).start()
                    dead = proxy.dead
                if dead:
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("expect", "connection")}
                upstream = http.client.HTTPConnection(*proxy.target, timeout=30)
                try:
                    upstream.request(self.command, self.path, body, headers)
                    response = upstream.getresponse()
                    data = response.read()
                finally:
                    upstream.close()
                self.send_response(response.status, response.reason)
                for name, value in response.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length", "server", "date"):
                        self.send_header(name, value)
                size = response.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data))
                self.send_header("Content-Length", size)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = forward

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


DEATHS = {"reading records": lambda method, path, n: n > 2,
          "reading blobs": lambda method, path, n: "/v1/blobs/" in path,
          "writing back": lambda method, path, n: method == "PUT"}


@pytest.mark.slow
@pytest.mark.parametrize("when", list(DEATHS))
def test_s3_tier_dying_mid_cook(tmp_path: Path, s3_server, clean, when: str) -> None:  # noqa: F811
    endpoint, options = s3_server
    url = f"s3://{BUCKET}/dying-{when.replace(' ', '-')}"
    first = api.cook(SAMPLE, cache=tmp_path / "a", out=tmp_path / "ao", remote_cache=url, remote_options=options,
                     scheduler="none")
    assert first.remote["written_back"] == len(first.plan.jobs)
    cache = RemoteCache(url, storage_options=options)
    cache.fs.rm([cache.job_path(k) for k in sorted(first.plan.jobs)[::2]])  # half the jobs to compile and write
    proxy = DyingProxy(endpoint, DEATHS[when])
    environment = env(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
                      FSSPEC_S3_ENDPOINT_URL=proxy.endpoint)
    try:
        run = cook_cli(tmp_path, url, environment)
    finally:
        if not proxy.dead:
            proxy.close()
    assert proxy.dead
    doing = "write to" if when == "writing back" else "read"
    assert_clean_cook(tmp_path, run, clean, f"warning: {url}: cannot {doing} the shared cache: cannot connect to "
                      f"{proxy.endpoint}", "this cook goes on with the local cache only")
