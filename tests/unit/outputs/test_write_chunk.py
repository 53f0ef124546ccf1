"""One chunk's index brought up to date against its outputs record (outputs/write_chunk.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pipeline.cache.store import Store
from pipeline.compile.scheduler import JobResult, RunResult
from pipeline.keys.required import KeyUses
from pipeline.keys.key import PermutationKey
from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_build import MISSING_BLOB, CookedJobs
from pipeline.outputs.records import OUTPUTS, as_tuple, outputs_entry
from pipeline.outputs.write_chunk import VERIFY_REASON, manifest_keys, update_chunk
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
        yield SimpleNamespace(store=store, jobs=jobs, out=tmp_path / "out", digests=digests,
                              json_path=tmp_path / "out" / "forest" / "c00.json")


def plan_of(stages: dict) -> JobPlan:
    return JobPlan(stages={key: {"fragment": job} for key, job in stages.items()})


def update(site, required=None, keys: str = "k1", has_blob=lambda digest: True, verify=False):
    required = {KEY: KeyUses(draws(2), [], {})} if required is None else required
    return update_chunk(site.jobs, "forest/c00", "forest", required, [], inputs(keys), site.store, site.out,
                        has_blob, verify=verify)


def test_a_first_cook_writes_the_index_alone_and_says_new(site):
    done = update(site)
    assert done.reason == "new" and done.written == [str(site.json_path)] == done.outputs
    assert done.keys_before is None and list(done.keys) == [KEY.text]
    assert done.blobs == {site.digests["a"]}
    index = mf.load_chunk_manifest(site.json_path)
    assert mf.stage_hashes(index) == done.blobs and index.keys[KEY.text].stages == {"fragment": site.digests["a"]}
    assert sorted(p.name for p in site.out.rglob("*")) == ["c00.json", "forest"]  # no per-chunk pak
    assert as_tuple(site.store.get(OUTPUTS, str(site.json_path.resolve()))) == \
        as_tuple(outputs_entry(inputs(), site.json_path))


def test_outputs_recorded_as_current_are_neither_built_nor_written(site):
    update(site)
    again = update(site)
    assert (again.reason, again.written, again.keys, again.blobs) == (None, [], None, None)
    assert again.outputs == [str(site.json_path)]


def test_a_deleted_index_is_written_again_with_its_reason(site):
    update(site)
    site.json_path.unlink()
    done = update(site)
    assert (done.reason, done.written) == ("file missing: c00.json", [str(site.json_path)])
    assert site.json_path.is_file() and done.keys_before is None


def test_changed_keys_rewrite_the_chunk_and_say_so(site):
    update(site)
    done = update(site, {KEY: KeyUses(draws(2), [], {}), OTHER: KeyUses(draws(1), [], {})}, keys="k2")
    assert done.reason == "inputs changed: keys" and done.written == [str(site.json_path)]
    assert done.keys_before == {KEY.text: KEY.hash} and sorted(done.keys) == sorted([KEY.text, OTHER.text])
    assert done.blobs == {site.digests["a"], site.digests["b"]}
    assert manifest_keys(site.json_path.read_bytes()) == {KEY.text: KEY.hash, OTHER.text: OTHER.hash}


def test_a_changed_input_with_the_same_outputs_writes_nothing(site):
    update(site)
    mtime = site.json_path.stat().st_mtime_ns
    done = update(site, keys="k2")  # e.g. a glTF file saved again unchanged
    assert (done.reason, done.written, done.blobs) == ("inputs changed: keys", [], {site.digests["a"]})
    assert site.json_path.stat().st_mtime_ns == mtime
    assert update(site, keys="k2").reason is None  # recorded: the file is that output


def test_verify_rebuilds_an_index_its_record_calls_current_and_rewrites_it_when_it_differs(site):
    update(site)
    good = site.json_path.read_bytes()
    site.json_path.write_bytes(good.replace(b'"level":"forest"', b'"level":"town"'))
    site.store.set(OUTPUTS, str(site.json_path.resolve()), outputs_entry(inputs(), site.json_path))
    assert update(site).reason is None  # the record is trusted without --verify
    done = update(site, verify=True)
    assert (done.reason, done.written) == (VERIFY_REASON, [str(site.json_path)])
    assert site.json_path.read_bytes() == good
    again = update(site, verify=True)
    assert (again.reason, again.written) == (None, [])


def test_a_stage_whose_blob_the_library_lacks_is_left_out_as_an_error(site):
    done = update(site, has_blob=lambda digest: digest != site.digests["a"])
    index = mf.load_chunk_manifest(site.json_path)
    assert index.keys[KEY.text].stages == {} and done.blobs == frozenset()
    assert index.errors == ({"key": KEY.text, "message": MISSING_BLOB},)


def test_manifest_keys_of_bytes_missing_broken_or_of_another_format(site) -> None:
    update(site)
    assert manifest_keys(site.json_path.read_bytes()) == {KEY.text: KEY.hash}
    assert manifest_keys(None) is None
    assert manifest_keys(b"{ no") is None
    assert manifest_keys(json.dumps({"format": 999}).encode()) is None
    assert manifest_keys(json.dumps({"format": mf.FORMAT_VERSION, "keys": {KEY.text: {}}}).encode()) is None
    assert manifest_keys(b"[]") is None


def test_an_index_edited_into_a_bad_shape_is_written_again(site):
    draw = {"file": "forest/c00/a.gltf", "node": 0, "mesh": 0, "primitive": 0, "material": 0, "variant": None,
            "passes": {"pbr/forward": {"key": KEY.text}}}
    entry = mf.ManifestEntry(key=KEY.text, hash=KEY.hash, shader="pbr", pass_name="forward",
                             features=dict(KEY.features), stages={}, draws=1)
    doc = mf.chunk_manifest("forest/c00", "forest", [entry], draws=(draw,)).to_json()
    doc["passes"][0] = ["pbr/forward"]
    site.json_path.parent.mkdir(parents=True)
    site.json_path.write_bytes(mf.dump_json(doc))
    done = update(site)
    assert done.written == [str(site.json_path)] and done.keys_before is None
