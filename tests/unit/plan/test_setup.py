"""The one job plan: every command's setup comes from the world (``world_setup``), planned by ``plan_for``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from pipeline.cache.job_records import JOB_EXACT
from pipeline.cache.store import Store
from pipeline.cook.verify import VerifyOptions, family_keys, family_setup
from pipeline.plan import jobs as _jobs
from pipeline.plan.matrix import with_platforms
from pipeline.plan.setup import plan_for, plan_jobs, world_setup

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "sample_world"


@pytest.fixture
def world(tmp_path: Path):
    """A world whose pipeline.toml names an allowed root, spirv-opt and a family's compile target."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "pipeline.toml").write_text(
        'allowed_roots = ["../shared"]\n[cook]\nspirv_opt = true\n[cook.compile]\npbr = "vulkan1.3"\n')
    return api.open_world(tmp_path / "w"), shared.resolve()


def test_verify_sets_a_family_up_as_the_world_does(world) -> None:
    w, shared = world
    pbr = w.families["pbr"]
    verified = family_setup(w, pbr, VerifyOptions(), identity="id")
    cooked = world_setup(w, "id")
    assert verified.allowed_roots == cooked.allowed_roots == (shared,)
    assert verified.options == cooked.options and verified.options.optimize is True
    assert verified.options.targets(pbr)[0].target == "vulkan1.3"
    assert verified.families == {"pbr": pbr} and verified.materials_dir == cooked.materials_dir
    assert family_setup(w, pbr, VerifyOptions(optimize=False), identity="id").options.optimize is False


def test_plan_for_is_the_world_setup_s_plan_and_records_what_it_preprocessed(world, tmp_path: Path) -> None:
    w, _ = world
    pbr = w.families["pbr"]
    keys = [k for p in sorted(pbr.compiled.passes) for k in family_keys(pbr, p, 2, 0)]
    with Store(tmp_path / "cache") as store:
        plan = plan_for(w, keys, "id", store=store, record=True)
        assert plan.exact and plan.preprocessed and len(store.keys(JOB_EXACT)) == len(plan.preprocessed)
        again = plan_jobs(world_setup(w, "id"), keys)
        assert set(plan.jobs) == set(again.jobs) and plan.stages == again.stages
        assert {job.request.target for job in plan.jobs.values()} == {"vulkan1.3"}
        assert all(job.request.optimize for job in plan.jobs.values())


def test_a_plan_after_a_recorded_one_preprocesses_nothing(world, tmp_path: Path, monkeypatch) -> None:
    w, _ = world
    pbr = w.families["pbr"]
    keys = list(family_keys(pbr, "forward", 3, 1))
    with Store(tmp_path / "cache") as store:
        first = plan_for(w, keys, "id", store=store, record=True)

        def refuse(tree):
            raise AssertionError("a recorded job was preprocessed again")
        monkeypatch.setattr(_jobs, "default_preprocessor", refuse)
        second = plan_for(w, keys, "id", store=store)
    assert second.preprocessed == {} and set(second.jobs) == set(first.jobs)


def test_the_plan_takes_each_family_s_targets_from_the_platform_matrix(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "pipeline.toml").write_text(
        '[platforms.desktop]\ntargets = ["vulkan1.2"]\n[platforms.apple]\ntargets = ["metal"]\nfamilies = ["pbr"]\n')
    w = api.open_world(tmp_path / "m")
    pbr = [k for k in family_keys(w.families["pbr"], "forward", 2, 0)]
    chain = [k for k in family_keys(w.families["chain"], "forward", 1, 0)]
    plan = plan_for(w, pbr + chain, "id")
    assert all(list(plan.targets[k]) == ["metal", "vulkan1.2"] for k in pbr)
    assert all(list(plan.targets[k]) == ["vulkan1.2"] for k in chain)
    assert all(plan.stages[k] == plan.targets[k]["vulkan1.2"] for k in pbr + chain)  # Vulkan's blobs are `stages`
    apple = plan_for(with_platforms(w, "apple"), pbr + chain, "id")
    assert all(list(apple.targets[k]) == ["metal"] for k in pbr)
    assert all(apple.targets[k] == {} and apple.stages[k] == {} for k in chain)  # in no platform cooked: no job
    assert {j.request.target for j in apple.jobs.values()} == {"metal"}


def test_a_platform_naming_no_family_fails_the_plan(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "pipeline.toml").write_text('[platforms.web]\ntargets = ["webgl2"]\nfamilies = ["pbrr"]\n')
    w = api.open_world(tmp_path / "m")
    with pytest.raises(api.ConfigError, match=r"pipeline.toml:3:14: error: platforms.web.families: 'pbrr' is no "
                                              r"shader family \(did you mean 'pbr'\?\)"):
        plan_for(w, [], "id")
