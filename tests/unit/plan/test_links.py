"""Linked programs in the plan: which stage jobs carry the other stage, and how their job keys
name it (a changed partner gives new keys; identical programs still share their jobs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, SourceTree
from pipeline.config import CompileTarget
from pipeline.keys.key import PermutationKey
from pipeline.plan.jobs import JobOptions, plan_jobs
from pipeline.plan.links import link_identity, linked_stages, linked_text_identity
from pipeline.rules.load import load_ruleset_text
from pipeline.structs import replace

FAMILY = """shader: g
sources: {vertex: m/g.vert, fragment: m/g.frag}
compile: {target: vulkan1.2, relaxed: true, auto_map: true, version: "310 es"}
features:
  UV: {type: bool}
  TINT: {type: bool}
passes: {main: {}}
"""
VERT = "precision highp float;\nin vec3 p;\nout vec2 v_uv;\nvoid main() {\n#if UV\n  v_uv = p.xy;\n#else\n" \
       "  v_uv = vec2(0.0);\n#endif\n  gl_Position = vec4(p, 1.0);\n}\n"
FRAG = "precision highp float;\nin vec2 v_uv;\nout vec4 c;\nvoid main() {\n#if TINT\n  c = vec4(v_uv, 0.5, 1.0);\n" \
       "#else\n  c = vec4(v_uv, 0.0, 1.0);\n#endif\n}\n"
AUTO = dict(target="vulkan1.2", auto_map=True, relaxed=True)


@pytest.fixture
def family(tmp_path: Path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "g.vert").write_text(VERT)
    (tmp_path / "m" / "g.frag").write_text(FRAG)
    return load_ruleset_text(FAMILY, "rules/g.yaml", materials_dir=tmp_path), SourceTree(tmp_path)


def key(uv=False, tint=False) -> PermutationKey:
    return PermutationKey("g", "main", (("TINT", tint), ("UV", uv)))


def test_auto_map_spirv_stages_carry_each_other_and_nothing_else_does() -> None:
    vertex, fragment = CompileRequest("a.vert", "vertex", **AUTO), CompileRequest("a.frag", "fragment", **AUTO)
    linked = linked_stages({"vertex": vertex, "fragment": fragment})
    assert linked == {"vertex": replace(vertex, link=(fragment,)), "fragment": replace(fragment, link=(vertex,))}
    strict = {"vertex": replace(vertex, auto_map=False), "fragment": replace(fragment, auto_map=False)}
    assert linked_stages(strict) == {}  # explicit layouts: left alone, byte for byte
    webgl = {"vertex": replace(vertex, target="webgl2"), "fragment": replace(fragment, target="webgl2")}
    assert linked_stages(webgl) == {} and linked_stages({"vertex": vertex}) == {}
    hlsl = {s: replace(r, auto_map=False, language="hlsl") for s, r in strict.items()}
    assert set(linked_stages(hlsl)) == {"vertex", "fragment"}  # HLSL stages are always linked
    assert link_identity(linked["fragment"])[0]["source"] == "a.vert"
    assert linked_text_identity(linked["fragment"], ("x",))[0]["stage"] == "vertex"


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "by-defines"])
def test_a_changed_partner_stage_gives_new_keys_and_identical_programs_share_jobs(family, exact: bool) -> None:
    rs, tree = family
    options = JobOptions(compiler="c")
    plan = plan_jobs([key(), key(tint=True), key(uv=True)], {"g": rs}, tree, options, exact=exact)
    stages = {k: plan.stages[k] for k in plan.stages}
    # TINT changes only the fragment text, yet the vertex job links with it: a job of its own
    assert stages[key()]["vertex"] != stages[key(tint=True)]["vertex"]
    assert stages[key()]["fragment"] != stages[key(uv=True)]["fragment"]  # UV changed its vertex stage only
    again = plan_jobs([key()], {"g": rs}, tree, options, exact=exact)
    assert again.stages[key()] == stages[key()]  # the same program: the same two keys
    job = plan.jobs[stages[key()]["fragment"]]
    assert job.request.link == (replace(plan.jobs[stages[key()]["vertex"]].request, link=()),)
    assert {path for path, _ in job.closure} == {"m/g.vert", "m/g.frag"}


def test_an_edit_to_the_partner_file_changes_the_key(family, tmp_path: Path) -> None:
    rs, tree = family
    before = plan_jobs([key()], {"g": rs}, tree, JobOptions(compiler="c"), exact=False).stages[key()]
    (tmp_path / "m" / "g.vert").write_text(VERT.replace("1.0);\n}", "2.0);\n}"))
    after = plan_jobs([key()], {"g": rs}, SourceTree(tmp_path), JobOptions(compiler="c"), exact=False).stages[key()]
    assert before["fragment"] != after["fragment"] and before["vertex"] != after["vertex"]


def test_a_strict_target_plans_as_before(family) -> None:
    rs, tree = family
    strict = (("g", (CompileTarget(target="vulkan1.2", version="310 es"),)),)
    plan = plan_jobs([key(), key(tint=True)], {"g": rs}, tree, JobOptions(compiler="c", compile=strict))
    assert all(job.request.link == () for job in plan.jobs.values())
    assert plan.stages[key()]["vertex"] == plan.stages[key(tint=True)]["vertex"]  # one vertex job, as before
