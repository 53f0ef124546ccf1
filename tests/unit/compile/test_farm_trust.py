"""A build-farm worker can never ship a wrong shader: real LocalCluster, real glslang, the command line.

One cluster serves the module; the worker named 0 is given a fault through the ``farm_faults``
preload (another stage's shader, text, garbage, no results, a made-up failure, another valid
shader of the same stage) while the other stays honest.  Every cook must end with the outputs
of a cook on this machine, byte for byte, and a cache from which a cook without the farm
compiles nothing and reports nothing wrong.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from farm_helpers import (
    SAMPLE,
    assert_clean_cache,
    cook_cli,
    problem_lines,
    set_fault,
    tree_files,
)

from pipeline import api



def farm_cook(farm, fault: str, folder: Path, *args: str):
    client, victim = farm
    set_fault(client, victim, fault)
    try:
        return cook_cli(SAMPLE, folder, "--scheduler", client.scheduler_info()["address"], *args), victim
    finally:
        set_fault(client, victim, "honest")


@pytest.mark.parametrize("fault, why", [
    ("other-stage", r"sent a blob for job \w{12} \(pbr/pbr\.\w+ \w+\) that cannot be its output: no \w+ entry point \(entry points: \[\d\]\)"),
    ("garbage", r"sent a blob for job \w{12} .* that cannot be its output: not a SPIR-V module \(no SPIR-V magic number\)"),
    ("text", r"sent a str as the blob of job \w{12}"),
    ("missing", r"sent no result for job \w{12}"),
    ("unparsable", r"answered with str, not a batch result"),
    ("reflection-garbage", r"sent a malformed reflection for job \w{12}"),
])
@pytest.mark.slow
def test_a_wrong_result_is_discarded_with_one_warning_and_compiled_here(farm, reference, tmp_path, fault, why):
    run, victim = farm_cook(farm, fault, tmp_path)
    assert run.returncode == 0, run.stderr
    (line,) = problem_lines(run.stderr)
    assert re.fullmatch(rf"warning: {re.escape(victim)}: farm worker {why}; it gets no more jobs this cook "
                        r"and its jobs are compiled elsewhere", line), line
    assert tree_files(tmp_path / "out") == tree_files(reference)
    assert_clean_cache(tmp_path, reference)


@pytest.mark.slow
def test_a_failure_from_the_farm_is_confirmed_here_and_never_remembered(farm, reference, tmp_path):
    """The worker reports a made-up compile error for every job: they all compile here, nothing fails."""
    run, victim = farm_cook(farm, "fail", tmp_path)
    assert run.returncode == 0, run.stderr
    (line,) = problem_lines(run.stderr)
    assert re.fullmatch(rf"warning: {re.escape(victim)}: farm worker reported a compile failure for job \w{{12}} "
                        r"that compiles here; it gets no more jobs this cook and no failure it reported is "
                        r"remembered", line), line
    assert tree_files(tmp_path / "out") == tree_files(reference)
    assert_clean_cache(tmp_path, reference)


@pytest.mark.slow
def test_audit_catches_a_worker_shipping_another_valid_shader(farm, reference, tmp_path):
    """Valid SPIR-V of the right stage and entry point, but not the job's: only comparing bytes tells.
    The cook fails loudly (one located error naming the worker and a job), nothing of the worker is
    used or cached, and the outputs are still right."""
    run, victim = farm_cook(farm, "same-stage", tmp_path, "--audit", "100")
    assert run.returncode == 1, run.stderr
    (line,) = problem_lines(run.stderr)
    assert re.fullmatch(rf"materials/pbr/pbr\.(vert|frag): error: audit: farm worker {re.escape(victim)} sent other "
                        r"bytes than this machine makes for job \w{12} \((vertex|fragment)\)( and \d+ more)? "
                        r"\(\d+ of its results audited\); none of its results is used \(compiled here instead\)",
                        line), line
    assert tree_files(tmp_path / "out") == tree_files(reference)
    assert_clean_cache(tmp_path, reference)


@pytest.mark.slow
def test_audit_catches_a_worker_sending_another_shaders_reflection(farm, reference, tmp_path):
    """The blobs are right; the reflection sent with them (which the outputs would take as it came) is not."""
    run, victim = farm_cook(farm, "reflection-lie", tmp_path, "--audit", "100")
    assert run.returncode == 1, run.stderr
    (line,) = problem_lines(run.stderr)
    assert re.fullmatch(rf"materials/pbr/pbr\.(vert|frag): error: audit: farm worker {re.escape(victim)} sent other "
                        r"bytes than this machine makes for job \w{12} \((vertex|fragment)\)( and \d+ more)? "
                        r"\(\d+ of its results audited\); none of its results is used \(compiled here instead\)",
                        line), line
    assert tree_files(tmp_path / "out") == tree_files(reference)
    assert_clean_cache(tmp_path, reference)


def test_audit_of_an_honest_farm_passes_and_counts_what_it_checked(farm, reference, tmp_path):
    run, _ = farm_cook(farm, "honest", tmp_path, "--audit", "100", "--json")
    assert run.returncode == 0, run.stderr
    assert problem_lines(run.stderr) == []
    doc = json.loads(run.stdout)
    assert doc["farm"]["audited"] == doc["compiled"] > 20 and doc["farm"]["compiled_here"] == 0
    assert doc["farm"]["banned_workers"] == {} and doc["errors"] == [] and doc["warnings"] == []
    assert tree_files(tmp_path / "out") == tree_files(reference)


def test_audit_sample_is_a_share_seeded_by_the_job_keys() -> None:
    from pipeline.compile.farm_trust import audit_sample

    keys = [f"{i:064x}" for i in range(1, 201)]
    five = audit_sample(keys, 5)
    assert len(five) == 10 and five <= set(keys)
    assert audit_sample(list(reversed(keys)), 5) == five  # the keys decide, not their order
    assert len(audit_sample(keys[:3], 5)) == 1 == math.ceil(3 * 0.05)  # at least one job
    assert audit_sample(keys, 0) == set() and audit_sample(keys, 100) == set(keys)


@pytest.mark.parametrize("value", [-1, 100.5, "5", True])
def test_audit_out_of_range_is_an_error_at_the_argument(value, tmp_path) -> None:
    with pytest.raises(api.PipelineError, match=r"^audit: error: expected a percentage from 0 to 100"):
        api.cook(SAMPLE, cache=tmp_path / "c", out=tmp_path / "o", audit=value)
    assert not (tmp_path / "o").exists()
