"""Define-based jobs kept across the plans of one process, per family generation."""

from __future__ import annotations

from pathlib import Path

from pipeline.compilers import SourceTree
from pipeline.plan import defined
from pipeline.plan.jobs import JobOptions, plan_jobs
from pipeline.rules.load import load_ruleset_text
from pipeline.structs import replace
from defined_helpers import FAMILY, KEYS, LIGHT, made, materials, no_generations  # noqa: F401 (fixtures)


def plan(materials: Path, options: JobOptions = JobOptions(compiler="c"), ruleset=None):
    rs = ruleset or load_ruleset_text(FAMILY, "rules/t.yaml", materials_dir=materials)
    return plan_jobs(KEYS, {"t": rs}, SourceTree(materials), options, exact=False), rs


def test_a_later_plan_of_the_same_family_takes_its_keys_jobs_as_kept(materials: Path, made: list) -> None:
    first, rs = plan(materials)
    assert len(made) == 2 * len(KEYS)
    made.clear()
    again, _ = plan(materials, ruleset=rs)  # the same rule set, options and sources
    assert made == [] and again.jobs == first.jobs and again.stages == first.stages and again.own == first.own
    defined.forget()
    fresh, _ = plan(materials, ruleset=rs)
    assert len(made) == 2 * len(KEYS) and fresh.jobs == first.jobs  # kept jobs are the ones a plan makes


def test_an_edited_include_another_rule_set_or_other_options_start_a_new_generation(
        materials: Path, made: list) -> None:
    first, rs = plan(materials)
    (materials / "m/light.glsl").write_text(LIGHT.replace("0.5", "0.25"))  # read by the fragment stage
    edited, _ = plan(materials, ruleset=rs)
    assert len(made) == 4 * len(KEYS)  # made again
    fragment = {k: job.request.stage for k, job in first.jobs.items()}
    assert [k for k in edited.jobs if k not in first.jobs] \
        == [k for k in edited.jobs if edited.jobs[k].request.stage == "fragment"] != []
    assert set(first.jobs) - set(edited.jobs) == {k for k, stage in fragment.items() if stage == "fragment"}
    made.clear()
    plan(materials, JobOptions(compiler="other"), ruleset=rs)
    assert len(made) == 2 * len(KEYS)
    made.clear()
    plan(materials, JobOptions(compiler="other"))  # an equal rule set loaded again: another object
    assert len(made) == 2 * len(KEYS)


def test_a_family_with_transforms_is_not_kept(materials: Path) -> None:
    rs = load_ruleset_text(FAMILY, "rules/t.yaml", materials_dir=materials)

    class Chained:
        def chain(self, shader: str) -> tuple:
            return ("a transform",)

    assert defined.generation(rs, replace(JobOptions(), plugins=Chained()), ()) is None
    assert defined.generation(rs, JobOptions(), ()) == {}


def test_a_generation_past_its_bound_starts_afresh(materials: Path, monkeypatch) -> None:
    rs = load_ruleset_text(FAMILY, "rules/t.yaml", materials_dir=materials)
    monkeypatch.setattr(defined, "MAX_KEPT", 2)
    table = defined.generation(rs, JobOptions(), ())
    table.update(a=1, b=2)
    assert defined.generation(rs, JobOptions(), ()) == {}
    assert defined.generation(rs, JobOptions(), ()) is defined.generation(rs, JobOptions(), ())
