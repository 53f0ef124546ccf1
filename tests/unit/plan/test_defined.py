"""Define-based jobs kept across the plans of one process, per family generation."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import SourceTree
from pipeline.keys.key import PermutationKey
from pipeline.plan import defined
from pipeline.plan import jobs as _jobs
from pipeline.plan.jobs import JobOptions, plan_jobs
from pipeline.rules.load import load_ruleset_text
from pipeline.structs import replace

FAMILY = """shader: t
sources: {vertex: m/a.vert, fragment: m/a.frag}
features:
  TINT: {type: bool}
  LIGHTS: {values: [1, 2]}
passes: {main: {}}
"""
VERT = "#version 450\nlayout(location = 0) in vec3 p;\nvoid main() { gl_Position = vec4(p, 1); }\n"
FRAG = '#version 450\n#include "light.glsl"\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(light()); }\n'
LIGHT = "float light() {\n#if TINT\n  return 0.5;\n#else\n  return float(LIGHTS);\n#endif\n}\n"
KEYS = [PermutationKey("t", "main", (("LIGHTS", n), ("TINT", t))) for n in (1, 2) for t in (False, True)]


@pytest.fixture(autouse=True)
def no_generations():
    defined.forget()
    yield
    defined.forget()


@pytest.fixture
def materials(tmp_path: Path) -> Path:
    for name, text in {"m/a.vert": VERT, "m/a.frag": FRAG, "m/light.glsl": LIGHT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.fixture
def made(monkeypatch) -> list:
    """The jobs make_job makes, as they are made."""
    calls: list = []
    real = _jobs.make_job
    monkeypatch.setattr(_jobs, "make_job", lambda *a, **k: calls.append(a[0].file) or real(*a, **k))
    return calls


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
