"""Preprocessing a plan's jobs ahead on forked workers: the same plan as one process makes alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline import api
from pipeline.cache.job_records import JOB_EXACT
from pipeline.cache.store import Store
from pipeline.cook.verify import family_keys
from pipeline.plan import ahead
from pipeline.plan import jobs as _jobs
from pipeline.plan.setup import plan_for, world_setup
from paths import REPO


@pytest.fixture
def keys():
    world = api.open_world(REPO / "examples" / "sample_world")
    pbr = world.families["pbr"]
    return world, [k for p in sorted(pbr.compiled.passes) for k in family_keys(pbr, p, 3, 1)]


def same(plan, alone) -> None:
    assert list(plan.jobs) == list(alone.jobs) and plan.stages == alone.stages and plan.own == alone.own
    assert plan.preprocessed == alone.preprocessed and plan.merged == alone.merged and plan.exact == alone.exact


def test_jobs_preprocessed_ahead_on_workers_make_the_plan_one_process_makes(keys, monkeypatch) -> None:
    world, wanted = keys
    alone = plan_for(world, wanted, "id")
    monkeypatch.setattr(ahead, "MIN_JOBS", 1)
    planner = world_setup(world, "id").planner()
    told = []
    learn = planner.learn
    monkeypatch.setattr(planner, "learn", lambda key, exact: told.append(key) or learn(key, exact))
    done = ahead.preprocess_ahead(planner, sorted(wanted), 2)
    assert done == len(told) == len(set(told)) == len(alone.preprocessed) > 0  # each job once, on the workers

    def refuse(_job):
        raise AssertionError("a job preprocessed ahead was preprocessed again")
    monkeypatch.setattr(planner, "exact_of", refuse)
    for key in sorted(wanted):
        planner.add(key)
    same(planner.plan, alone)
    same(plan_for(world, wanted, "id", workers=2), alone)


def test_recorded_jobs_and_too_few_jobs_go_to_no_pool(keys, tmp_path: Path, monkeypatch) -> None:
    world, wanted = keys
    monkeypatch.setattr(ahead, "process_pool", lambda *a, **k: pytest.fail("a pool was started"))
    with Store(tmp_path / "cache") as store:
        first = plan_for(world, wanted, "id", store=store, record=True, workers=2)  # fewer jobs than MIN_JOBS
        monkeypatch.setattr(ahead, "MIN_JOBS", 1)
        monkeypatch.setattr(_jobs, "default_preprocessor", lambda tree: pytest.fail("preprocessed again"))
        planner = world_setup(world, "id").planner(store)
        monkeypatch.setattr(store, "get", lambda *a, **k: pytest.fail("a recorded key read alone"))
        asked = []
        get_many = store.get_many
        monkeypatch.setattr(store, "get_many", lambda kind, keys: asked.append(kind) or get_many(kind, keys))
        assert planner.unknown_jobs(sorted(wanted)) == []  # every exact key recorded, read together
        assert asked == [JOB_EXACT]
        monkeypatch.undo()
        monkeypatch.setattr(ahead, "process_pool", lambda *a, **k: pytest.fail("a pool was started"))
        monkeypatch.setattr(ahead, "MIN_JOBS", 1)
        monkeypatch.setattr(_jobs, "default_preprocessor", lambda tree: pytest.fail("preprocessed again"))
        again = plan_for(world, wanted, "id", store=store, workers=2)
    assert list(again.jobs) == list(first.jobs) and again.stages == first.stages and again.preprocessed == {}


def test_a_pool_that_breaks_leaves_the_jobs_to_the_planner(keys, monkeypatch) -> None:
    world, wanted = keys
    alone = plan_for(world, wanted, "id")
    monkeypatch.setattr(ahead, "MIN_JOBS", 1)
    monkeypatch.setattr(ahead, "_task", _killed)
    same(plan_for(world, wanted, "id", workers=2), alone)


def _killed(_indexes) -> None:
    """A worker that dies on its task: the pool breaks."""
    os._exit(3)
