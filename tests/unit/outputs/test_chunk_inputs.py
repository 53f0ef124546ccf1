"""The named input digests a chunk's outputs record keeps (outputs/chunk_inputs.py)."""

from __future__ import annotations

from pipeline.compile.scheduler import JobResult, RunResult
from pipeline.keys.key import PermutationKey
from pipeline.outputs.chunk_inputs import chunk_inputs, shared_inputs
from pipeline.plan.jobs import JobPlan

KEY = PermutationKey("pbr", "forward", (("NORMAL_MAP", True),))


def plan_and_run(blob: str) -> tuple[JobPlan, RunResult]:
    return JobPlan(stages={KEY: {"fragment": "job1"}}), RunResult(results={"job1": JobResult(blob)})


def differing(a, b) -> list[str]:
    return [name for (name, x), (_, y) in zip(a, b) if x != y]


def test_a_chunk_names_its_inputs_in_a_fixed_order():
    shared = shared_inputs(*plan_and_run("a" * 64), "materials/")
    inputs = chunk_inputs(shared, "fp", "forest", [])
    assert [name for name, _ in inputs] == ["tool", "job results", "keys", "level", "file errors"]
    assert inputs[2] == ["keys", "fp"]


def test_a_chunk_without_fingerprint_has_no_inputs():
    assert chunk_inputs(shared_inputs(*plan_and_run("a" * 64), "materials/"), None, "forest", []) is None


def test_each_input_changes_only_its_own_digest():
    base = chunk_inputs(shared_inputs(*plan_and_run("a" * 64), "materials/"), "fp", "forest", [])
    blob = chunk_inputs(shared_inputs(*plan_and_run("b" * 64), "materials/"), "fp", "forest", [])
    prefix = chunk_inputs(shared_inputs(*plan_and_run("a" * 64), "shaders/"), "fp", "forest", [])
    shared = shared_inputs(*plan_and_run("a" * 64), "materials/")
    assert differing(base, blob) == ["job results"]
    assert differing(base, prefix) == ["tool"]
    assert differing(base, chunk_inputs(shared, "fp2", "forest", [])) == ["keys"]
    assert differing(base, chunk_inputs(shared, "fp", "town", [])) == ["level"]
    assert differing(base, chunk_inputs(shared, "fp", "forest", [{"message": "bad"}])) == ["file errors"]
