"""One chunk's outputs brought up to date against its outputs record (outputs/write_chunk.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pipeline.cache.store import Store
from pipeline.compile.scheduler import JobResult, RunResult
from pipeline.keys.required import KeyUses
from pipeline.keys.key import PermutationKey
from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_build import CookedJobs
from pipeline.outputs.pak import PakReader
from pipeline.outputs.write_chunk import chunk_outputs_current, manifest_keys, update_chunk, write_chunk_outputs
from pipeline.plan.jobs import JobPlan
from recorders import draw_sources as draws

KEY = PermutationKey("pbr", "forward", (("NORMAL_MAP", False),))
OTHER = PermutationKey("pbr", "forward", (("NORMAL_MAP", True),))
FAMILIES = {"pbr": SimpleNamespace(features={}, instance_inputs=())}
BLOB, BLOB2 = b"\x03\x02\x23\x07blob", b"\x03\x02\x23\x07other"


def inputs(keys: str = "k1") -> list[list[str]]:
    return [["tool", "t"], ["job results", "r"], ["keys", keys], ["level", "l"], ["file errors", "e"]]


@pytest.fixture
def site(tmp_path):
    with Store(tmp_path / "cache") as store:
        digests = {"a": store.put_blob(BLOB), "b": store.put_blob(BLOB2)}
        plan = plan_of({KEY: "a", OTHER: "b"})
        run = RunResult(results={name: JobResult(digest) for name, digest in digests.items()})
        jobs = CookedJobs(plan, run, FAMILIES, {}, lambda key: [])
        yield SimpleNamespace(store=store, jobs=jobs, out=tmp_path / "out")


def plan_of(stages: dict) -> JobPlan:
    return JobPlan(stages={key: {"fragment": job} for key, job in stages.items()})


def update(site, required=None, keys: str = "k1"):
    required = {KEY: KeyUses(draws(2), [], {})} if required is None else required
    return update_chunk(site.jobs, "forest/c00", "forest", required, [], inputs(keys), site.store, site.out, {})


def test_a_first_cook_writes_both_files_and_says_new(site):
    done = update(site)
    pak = site.out / "forest" / done.pak
    assert done.reason == "new" and sorted(done.written) == sorted([str(pak), str(site.out / "forest/c00.json")])
    assert done.keys_before is None and list(done.keys) == [KEY.text]
    assert dict(PakReader(pak).items()) == {site.jobs.run.results["a"].blob: BLOB}
    assert done.outputs == [str(site.out / "forest/c00.json"), str(pak)]


def test_outputs_recorded_as_current_are_neither_built_nor_written(site):
    update(site)
    again = update(site)
    assert (again.reason, again.written, again.keys) == (None, [], None)


def test_a_deleted_pak_alone_is_written_again_with_its_reason(site):
    first = update(site)
    pak = site.out / "forest" / first.pak
    pak.unlink()
    done = update(site)
    assert (done.reason, done.written) == (f"file missing: {first.pak}", [str(pak)])
    assert pak.is_file()


def test_changed_keys_rewrite_the_chunk_and_say_so(site):
    update(site)
    done = update(site, {KEY: KeyUses(draws(2), [], {}), OTHER: KeyUses(draws(1), [], {})}, keys="k2")
    assert done.reason == "inputs changed: keys" and len(done.written) == 2
    assert done.keys_before == {KEY.text: KEY.hash} and sorted(done.keys) == sorted([KEY.text, OTHER.text])
    assert manifest_keys(site.out / "forest/c00.json") == {KEY.text: KEY.hash, OTHER.text: OTHER.hash}


def test_a_changed_input_with_the_same_outputs_writes_nothing(site):
    update(site)
    done = update(site, keys="k2")  # e.g. a glTF file saved again unchanged
    assert (done.reason, done.written) == ("inputs changed: keys", [])
    assert update(site, keys="k2").reason is None  # recorded: the files are those outputs


def test_the_files_compare_by_bytes_and_pak_index(site):
    done = update(site)
    manifest = mf.load_chunk_manifest(done.json_path)
    assert chunk_outputs_current(site.out, manifest)
    other = mf.chunk_manifest("forest/c00", "forest", [])
    assert not chunk_outputs_current(site.out, other)
    assert manifest_keys(site.out / "forest/none.json") is None


def test_writing_a_new_pak_removes_the_chunks_older_one(site):
    first = update(site)
    manifest = mf.chunk_manifest("forest/c00", "forest", [])
    write_chunk_outputs(site.out, manifest, {})
    assert not (site.out / "forest" / first.pak).exists() and (site.out / "forest" / manifest.pak).is_file()


def test_manifest_keys_of_a_missing_or_broken_manifest(tmp_path) -> None:
    assert manifest_keys(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text("{ no")
    assert manifest_keys(tmp_path / "bad.json") is None
    (tmp_path / "other.json").write_text(json.dumps({"format": 999}))
    assert manifest_keys(tmp_path / "other.json") is None
