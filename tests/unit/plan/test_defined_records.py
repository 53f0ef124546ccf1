"""A key's define-based jobs recorded in the store, read by the plans of later processes (plan/defined_records.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cache.store import Store
from pipeline.compilers import SourceTree
from pipeline.compilers.plugins import Plugins
from pipeline.plan import defined
from pipeline.plan import defined_records as records
from pipeline.plan.jobs import JobOptions, Planner
from pipeline.plugin_loader import PluginRef
from pipeline.rules.load import load_ruleset_text
from pipeline.structs import replace
from defined_helpers import FAMILY, KEYS, LIGHT, made, materials, no_generations  # noqa: F401 (fixtures)

OPTIONS = JobOptions(compiler="c")


def plan(materials: Path, store: Store | None, options: JobOptions = OPTIONS, family: str = FAMILY,
         record: bool = True):
    """A plan of KEYS as plan_jobs (pipeline.plan.setup) makes one, in a new process."""
    defined.forget()
    rs = load_ruleset_text(family, "rules/t.yaml", materials_dir=materials)
    planner = Planner({"t": rs}, SourceTree(materials), options, exact=False, store=store)
    read = planner.kept.prefetch(KEYS, {"t": rs})
    for key in KEYS:
        planner.add(key)
    if record:
        planner.kept.record()
    return planner.plan, read


def test_a_later_process_reads_the_keys_jobs_instead_of_making_them(materials: Path, made: list) -> None:
    store = Store.in_memory()
    first, read = plan(materials, store)
    assert read == 0 and len(made) == 2 * len(KEYS)
    assert len(store.keys(records.JOB_DEFINED)) == len(KEYS)
    assert sorted(store.keys(records.JOB_STAGE)) == sorted(first.jobs)  # each job once
    made.clear()
    again, read = plan(materials, store)
    assert read == len(KEYS) and made == []
    assert again.jobs == first.jobs and again.stages == first.stages and again.own == first.own
    alone, _ = plan(materials, None)  # what a plan without records makes
    assert alone.jobs == first.jobs and alone.own == first.own and len(made) == 2 * len(KEYS)


def test_nothing_is_recorded_unless_the_plan_records(materials: Path, made: list) -> None:
    store = Store.in_memory()
    plan(materials, store, record=False)
    assert store.keys(records.JOB_DEFINED) == [] and store.keys(records.JOB_STAGE) == []
    made.clear()
    plan(materials, store)
    assert len(made) == 2 * len(KEYS)


@pytest.mark.parametrize("change", ["include", "rule set", "options"])
def test_an_edited_include_rule_set_or_options_is_another_generation_made_anew(
        materials: Path, made: list, change: str) -> None:
    store = Store.in_memory()
    first, _ = plan(materials, store)
    made.clear()
    options, family = OPTIONS, FAMILY
    if change == "include":  # read by the fragment stage through an #include
        (materials / "m/light.glsl").write_text(LIGHT.replace("0.5", "0.25"))
    elif change == "rule set":  # an extra define of every pass
        family = FAMILY + "defines: {EXTRA: {value: '1'}}\n"
    else:
        options = replace(OPTIONS, optimize=True)
    again, read = plan(materials, store, options, family)
    assert read == 0 and len(made) == 2 * len(KEYS)
    assert set(again.jobs) != set(first.jobs)
    made.clear()
    alone, _ = plan(materials, None, options, family)
    assert alone.jobs == again.jobs and len(made) == 2 * len(KEYS)


def test_a_damaged_record_is_made_again(materials: Path, made: list) -> None:
    store = Store.in_memory()
    first, _ = plan(materials, store)
    vertex = sorted(k for k, job in first.jobs.items() if job.request.stage == "vertex")
    store.set(records.JOB_STAGE, vertex[0], {"request": 5, "closure": []})
    users = [k for k in KEYS if first.stages[k]["vertex"] == vertex[0]]
    made.clear()
    again, read = plan(materials, store)
    assert read == len(KEYS) - len(users) and len(made) == 2 * len(users)
    assert again.jobs == first.jobs and again.own == first.own
    made.clear()
    plan(materials, store)  # recorded whole again
    assert made == []


def test_a_world_with_plug_ins_records_nothing(materials: Path, made: list) -> None:
    ref = PluginRef("transform", "tint", "tint_plugin:transform", "1.0", "0" * 64)
    options = replace(OPTIONS, plugins=Plugins(transforms=(ref,), family_transforms=(("t", ()),)))
    rs = load_ruleset_text(FAMILY, "rules/t.yaml", materials_dir=materials)
    assert records.generation_digest(rs, options, ()) is None
    assert records.generation_digest(rs, OPTIONS, ()) == records.generation_digest(rs, OPTIONS, ())
