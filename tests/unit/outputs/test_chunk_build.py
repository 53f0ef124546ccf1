"""A chunk's manifest from the job records (outputs/chunk_build.py)."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.compile.scheduler import JobResult, RunResult
from pipeline.keys.required import KeyUses
from pipeline.keys.key import PermutationKey
from pipeline.outputs.chunk_build import MISSING_BLOB, CookedJobs, build_chunk
from pipeline.plan.jobs import JobPlan
from recorders import draw_sources as draws

GOOD = PermutationKey("pbr", "forward", (("NORMAL_MAP", False),))
BAD = PermutationKey("pbr", "forward", (("NORMAL_MAP", True),))
FAMILIES = {"pbr": SimpleNamespace(features={}, instance_inputs=())}
USES = {GOOD: KeyUses(draws(3), [{"cull": "back"}], {}), BAD: KeyUses(draws(1), [], {})}


def jobs(bad_blob: str | None, key_errors=lambda key: []) -> CookedJobs:
    plan = JobPlan(stages={GOOD: {"fragment": "good"}, BAD: {"fragment": "bad"}})
    run = RunResult(results={"good": JobResult("a" * 64), "bad": JobResult(bad_blob)})
    return CookedJobs(plan, run, FAMILIES, {"c00": {"pbr/forward": GOOD.text}}, key_errors)


def never_reflected(digest: str) -> dict:
    raise AssertionError("a single-stage key has no pipeline state to reflect")


def test_every_key_lists_its_blobs_draws_and_render_states():
    built = build_chunk(jobs("b" * 64), "c00", "forest", USES, [], lambda d: True, never_reflected)
    entry = built.manifest.keys[GOOD.text]
    assert (entry.stages, entry.draws, entry.hash) == ({"fragment": "a" * 64}, 3, GOOD.hash)
    assert built.manifest.keys[BAD.text].stages == {"fragment": "b" * 64}
    assert built.manifest.errors == () and built.manifest.fallbacks == {"pbr/forward": GOOD.text}


def test_a_failed_job_gives_the_errors_the_cook_supplies():
    failed = jobs(None, lambda key: [{"key": key.text, "message": "x.frag:3: error: boom"}])
    manifest = build_chunk(failed, "c00", "forest", USES, [{"message": "file error"}], lambda d: True,
                           never_reflected).manifest
    assert manifest.keys[BAD.text].stages == {}
    assert list(manifest.errors) == [{"message": "file error"}, {"key": BAD.text, "message": "x.frag:3: error: boom"}]


def test_a_blob_gone_from_the_store_is_named_missing():
    manifest = build_chunk(jobs("b" * 64), "c00", "forest", USES, [], lambda d: d != "b" * 64, never_reflected).manifest
    assert manifest.keys[BAD.text].stages == {}
    assert list(manifest.errors) == [{"key": BAD.text, "message": MISSING_BLOB}]
