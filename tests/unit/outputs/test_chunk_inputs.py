"""The named input digests a chunk's outputs record keeps (outputs/chunk_inputs.py)."""

from __future__ import annotations

from pipeline.compile.scheduler import JobResult, RunResult
from pipeline.errors import Diagnostic, Location
from pipeline.keys.key import PermutationKey
from pipeline.outputs.chunk_inputs import JobResults, chunk_inputs, shared_inputs
from pipeline.plan.jobs import JobPlan

KEY = PermutationKey("pbr", "forward", (("NORMAL_MAP", True),))
OTHER = PermutationKey("pbr", "forward", (("NORMAL_MAP", False),))


def plan_and_run(blob: str, other: str = "c" * 64) -> tuple[JobPlan, RunResult]:
    return (JobPlan(stages={KEY: {"fragment": "job1"}, OTHER: {"fragment": "job2"}}),
            RunResult(results={"job1": JobResult(blob), "job2": JobResult(other)}))


def inputs_of(blob: str = "a" * 64, prefix: str = "materials/", fingerprint: str | None = "fp",
              level: str = "forest", errors: list | None = None, keys=(KEY,), other: str = "c" * 64):
    return chunk_inputs(shared_inputs(prefix), fingerprint, level, errors or [],
                        JobResults(*plan_and_run(blob, other)).of(keys))


def differing(a, b) -> list[str]:
    return [name for (name, x), (_, y) in zip(a, b) if x != y]


def test_a_chunk_names_its_inputs_in_a_fixed_order():
    inputs = inputs_of()
    assert [name for name, _ in inputs] == ["tool", "job results", "keys", "level", "file errors"]
    assert inputs[2] == ["keys", "fp"]


def test_a_chunk_without_fingerprint_has_no_inputs():
    assert inputs_of(fingerprint=None) is None


def test_each_input_changes_only_its_own_digest():
    base = inputs_of()
    assert differing(base, inputs_of(blob="b" * 64)) == ["job results"]
    assert differing(base, inputs_of(prefix="shaders/")) == ["tool"]
    assert differing(base, inputs_of(fingerprint="fp2")) == ["keys"]
    assert differing(base, inputs_of(level="town")) == ["level"]
    assert differing(base, inputs_of(errors=[{"message": "bad"}])) == ["file errors"]


def test_job_results_cover_only_the_keys_a_chunk_uses():
    """A job another chunk's key needs compiles to something new: this chunk's inputs stay as they were."""
    assert inputs_of(other="d" * 64) == inputs_of()
    assert differing(inputs_of(keys=(KEY, OTHER)), inputs_of(keys=(KEY, OTHER), other="d" * 64)) == ["job results"]
    assert inputs_of(keys=(OTHER, KEY)) == inputs_of(keys=(KEY, OTHER))  # in any order


def test_job_results_see_diagnostics_cancelling_and_targets():
    plan, run = plan_and_run("a" * 64)
    base = JobResults(plan, run).of([KEY])
    warned = RunResult(results={"job1": JobResult("a" * 64, (Diagnostic(Location("x.frag", 1, 1), "w", "warning"),))})
    assert JobResults(plan, warned).of([KEY]) != base
    assert JobResults(plan, RunResult(results=run.results, cancelled=["job1"])).of([KEY]) != base
    targeted = JobPlan(stages=plan.stages, targets={KEY: {"vulkan": {"fragment": "job1"}, "webgl2": {"fragment": "job2"}}})
    assert JobResults(targeted, run).of([KEY]) != base
