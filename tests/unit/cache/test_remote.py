"""The shared cache tier, one contract run against a plain folder and a real S3 API.

S3 is the moto server (``moto[server]`` from the test extra), started by these tests
on a loopback port and stopped at the end; the cache reaches it through s3fs.
Two machines are two local caches: the second cook of a world compiles nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from pipeline import api
from pipeline.cache.remote import RemoteCache
from pipeline.errors import ConfigError
from pipeline.compile.scheduler import JobRunner
from paths import REPO
from remote_helpers import BUCKET, s3_server  # noqa: F401  (the moto fixture)

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
MATERIALS = ROOT / "materials"
CLI = [sys.executable, "-c", "from pipeline.cli import main; main()"]


@dataclass
class Remote:
    url: str
    options: dict | None

    def open(self, mode: str = "readwrite") -> RemoteCache:
        return RemoteCache(self.url, mode=mode, storage_options=self.options)


@pytest.fixture(params=["folder", "s3"])
def remote(request, tmp_path: Path) -> Remote:
    if request.param == "folder":
        return Remote(str(tmp_path / "share" / "shader-cache"), None)
    _, options = request.getfixturevalue("s3_server")
    prefix = re.sub(r"\W+", "-", request.node.name)  # no glob characters in the key
    return Remote(f"s3://{BUCKET}/{prefix}", options)


def cook(tmp_path: Path, machine: str, remote: Remote, mode: str = "readwrite", world: Path = SAMPLE):
    compiler = JobRunner(MATERIALS, "capi", 2)
    result = api.cook(world, cache=tmp_path / machine / "cache", out=tmp_path / machine / "out", jobs=2,
                      compiler=compiler, remote_cache=remote.url, remote_cache_mode=mode,
                      remote_options=remote.options, scheduler="none")
    return result, compiler


def outputs(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_second_machine_compiles_nothing(tmp_path: Path, remote: Remote) -> None:
    first, compiler_a = cook(tmp_path, "a", remote)
    jobs = len(first.plan.jobs)
    assert compiler_a.calls == jobs and first.remote["written_back"] == jobs and first.run.fetched == []
    second, compiler_b = cook(tmp_path, "b", remote)
    assert compiler_b.calls == 0 and second.run.compiled == []
    assert len(second.run.fetched) == jobs == second.to_json()["fetched"] == second.run.cache_hits
    assert second.remote["written_back"] == 0 and second.errors == [] and second.warnings == []
    assert outputs(tmp_path / "a" / "out") == outputs(tmp_path / "b" / "out")
    third, compiler_c = cook(tmp_path, "b", remote)  # the copies are local now
    assert compiler_c.calls == 0 and third.run.fetched == []


@pytest.mark.slow
def test_records_are_versioned_json_with_library_relative_diagnostics(tmp_path: Path, remote: Remote) -> None:
    lib = tmp_path / "lib"
    (lib / "pbr").mkdir(parents=True)
    for f in MATERIALS.rglob("*"):
        if f.is_file():
            (lib / f.relative_to(MATERIALS)).parent.mkdir(parents=True, exist_ok=True)
            (lib / f.relative_to(MATERIALS)).write_bytes(f.read_bytes())
    world = tmp_path / "world"
    world.mkdir()
    (world / "pipeline.toml").write_text(f'materials = "{lib}"\n')
    for f in SAMPLE.rglob("*.gltf"):
        (world / f.relative_to(SAMPLE)).parent.mkdir(parents=True, exist_ok=True)
        (world / f.relative_to(SAMPLE)).write_bytes(f.read_bytes())
    frag = lib / "pbr" / "pbr.frag"
    frag.write_text(frag.read_text() + "\nvoid unused() { no_such_function(); }\n")
    result = api.cook(world, cache=tmp_path / "a", out=tmp_path / "ao", remote_cache=remote.url,
                      remote_options=remote.options, scheduler="none")
    failed = sorted(k for k, r in result.run.results.items() if not r.ok)
    assert failed and result.errors
    cache = remote.open()
    record = orjson.loads(cache.fs.cat(cache.job_path(failed[0])))
    assert record["version"] == 1 and record["key"] == failed[0] and record["blob"] is None
    assert record["diagnostics"][0]["file"] == "pbr/pbr.frag"  # relative to the shader library
    ok = next(k for k, r in result.run.results.items() if r.ok)
    assert orjson.loads(cache.fs.cat(cache.job_path(ok)))["blob"] == result.run.results[ok].blob
    again = api.cook(world, cache=tmp_path / "b", out=tmp_path / "bo", remote_cache=remote.url,
                     remote_options=remote.options, scheduler="none")
    # a failed compile read from the tier is not trusted: those jobs compile here and fail the same way
    assert sorted(again.run.compiled) == failed and sorted(again.errors, key=str) == sorted(result.errors, key=str)


@pytest.mark.slow
def test_corrupt_blob_is_a_miss_and_a_warning(tmp_path: Path, remote: Remote) -> None:
    first, _ = cook(tmp_path, "a", remote)
    cache = remote.open()
    victim = sorted(first.run.results.items())[0][1].blob
    users = sorted(k for k, r in first.run.results.items() if r.blob == victim)
    cache.fs.pipe_file(cache.blob_path(victim), b"\x03\x02\x23\x07 not the blob")
    second, compiler = cook(tmp_path, "b", remote)
    assert sorted(second.run.compiled) == users and compiler.calls == len(users)
    assert any(f"blob {victim[:12]} is corrupt" in w for w in second.warnings)
    assert outputs(tmp_path / "a" / "out") == outputs(tmp_path / "b" / "out")


@pytest.mark.slow
def test_foreign_record_is_a_miss_and_a_warning(tmp_path: Path, remote: Remote) -> None:
    first, _ = cook(tmp_path, "a", remote)
    cache = remote.open()
    key = sorted(first.plan.jobs)[0]
    cache.fs.pipe_file(cache.job_path(key), orjson.dumps({"version": 99, "key": key, "blob": None}))
    second, compiler = cook(tmp_path, "b", remote)
    assert second.run.compiled == [key] and compiler.calls == 1
    assert any("not a version 1 record" in w for w in second.warnings)


@pytest.mark.slow
def test_read_mode_fetches_and_never_writes(tmp_path: Path, remote: Remote) -> None:
    result, compiler = cook(tmp_path, "a", remote, mode="read")
    assert compiler.calls == len(result.plan.jobs) and result.remote["written_back"] == 0
    stats = remote.open().stats()
    assert (stats.jobs, stats.blobs, stats.uses) == (0, 0, 0)
    cook(tmp_path, "b", remote)  # readwrite fills it
    again, compiler = cook(tmp_path, "c", remote, mode="read")
    assert compiler.calls == 0 and len(again.run.fetched) == len(again.plan.jobs)


def test_interrupted_folder_write_leaves_no_entry(tmp_path: Path, monkeypatch) -> None:
    """A folder write goes to a temp name and is renamed: a write that dies before the rename is a miss."""
    cache = RemoteCache(str(tmp_path / "share"))

    def die(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cache.fs, "mv", die)
    with pytest.raises(KeyboardInterrupt):
        cache.put({"ab" * 32: b"data"}, {})
    assert cache.get_blobs(["ab" * 32]) == {}
    assert not cache.fs.exists(cache.blob_path("ab" * 32))


@pytest.mark.slow
def test_stats_and_gc_keep_what_recent_cooks_used(tmp_path: Path, remote: Remote) -> None:
    first, _ = cook(tmp_path, "a", remote)
    cache = remote.open()
    stats = cache.stats()
    blobs = {r.blob for r in first.run.results.values()}
    assert (stats.jobs, stats.blobs, stats.uses) == (len(first.plan.jobs), len(blobs), 1)
    assert stats.bytes > 0 and stats.last_use is not None
    kept = cache.gc(keep_days=30)
    assert (kept.jobs_removed, kept.blobs_removed, kept.jobs_kept) == (0, 0, len(first.plan.jobs))
    dry = remote.open("read").gc(keep_days=1, now=stats.last_use + 10 * 86400)
    assert dry.dry_run and dry.jobs_removed == len(first.plan.jobs) and cache.stats().jobs == len(first.plan.jobs)
    gone = cache.gc(keep_days=1, now=stats.last_use + 10 * 86400)
    assert (gone.jobs_removed, gone.blobs_removed, gone.uses_removed) == (len(first.plan.jobs), len(blobs), 1)
    assert (cache.stats().jobs, cache.stats().blobs) == (0, 0)


@pytest.mark.slow
def test_cli_cooks_against_s3_from_the_environment(tmp_path: Path, s3_server) -> None:
    """``pipeline cook --remote-cache s3://...`` with the endpoint and keys from the environment."""
    endpoint, _ = s3_server
    env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1", FSSPEC_S3_ENDPOINT_URL=endpoint)
    url = f"s3://{BUCKET}/cli"
    for machine in ("a", "b"):
        run = subprocess.run([*CLI, "cook", str(SAMPLE), "--cache",
                              str(tmp_path / machine / "cache"), "--out", str(tmp_path / machine / "out"),
                              "--remote-cache", url, "--scheduler", "none", "--json"],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    doc = orjson.loads(run.stdout)
    assert doc["compiled"] == 0 and doc["fetched"] == doc["jobs"] > 0 and doc["remote"]["url"] == url
    stats = subprocess.run([*CLI, "cache", "stats", "--cache",
                            str(tmp_path / "b" / "cache"), "--remote-cache", url, "--json"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    doc = orjson.loads(stats.stdout)
    assert doc["remote"]["jobs"] == doc["local"]["jobs"] > 0


def test_world_config_names_the_shared_cache(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    (world / "pipeline.toml").write_text('[cache]\nremote = "../share"\nremote_mode = "readwrite"\n')
    first = api.cook(world, cache=tmp_path / "a", out=tmp_path / "ao", scheduler="none")
    assert first.remote["url"] == str(world / "../share") and first.remote["written_back"] == len(first.plan.jobs)
    assert (tmp_path / "share" / "v1" / "jobs").is_dir()
    second = api.cook(world, cache=tmp_path / "b", out=tmp_path / "bo", scheduler="none")
    assert second.run.compiled == [] and len(second.run.fetched) == len(second.plan.jobs)
    (world / "pipeline.toml").write_text('[cache]\nremote = "../share"\nremote_mode = "write"\n')
    with pytest.raises(ConfigError) as caught:
        api.cook(world, cache=tmp_path / "c", out=tmp_path / "co", scheduler="none")
    assert str(caught.value).startswith("pipeline.toml:3:")


def test_unwritable_shared_cache_is_a_warning(tmp_path: Path) -> None:
    """A shared folder that cannot be used: the cook succeeds, its results stay local, one warning says so."""
    share = tmp_path / "share"
    share.write_text("a file where the shared folder should be")
    result = api.cook(SAMPLE, cache=tmp_path / "a", out=tmp_path / "ao", remote_cache=str(share),
                      scheduler="none")
    assert result.errors == [] and len(result.run.compiled) == len(result.plan.jobs)
    assert result.warnings == [f"{share}: cannot read the shared cache: Not a directory: {share}/v1; "
                               f"this cook goes on with the local cache only"]
