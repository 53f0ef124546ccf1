"""Stage jobs: what one compile is, the cache key naming it, and the plan deduplicating every key's jobs."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pipeline.checked import convert
from pipeline.compile.scheduler import JobResult
from pipeline.compilers import CompileRequest, SourceTree
from pipeline.config import CompileTarget
from pipeline.digest import bytes_hash
from pipeline.errors import Diagnostic, Location
from pipeline.keys.key import PermutationKey
from pipeline.plan.jobs import (
    ClosureCache,
    JobOptions,
    JobPlan,
    Planner,
    StageJob,
    blobs_of,
    default_preprocessor,
    generated_jobs,
    job_key,
    make_job,
    plan_jobs,
    primary_stages,
    unknown_compile_families,
)
from pipeline.plan.setup import defines_by_stage
from pipeline.rules.load import load_ruleset_text
from pipeline.structs import replace

FAMILY = """shader: t
sources: {vertex: m/a.vert, fragment: m/a.frag}
features:
  TINT: {type: bool}
  LIGHTS: {values: [1, 2]}
  SKIN: {type: bool}
passes: {main: {}}
"""
VERT = "#version 450\nlayout(location = 0) in vec3 p;\nvoid main() {\n#if SKIN\n  gl_Position = vec4(p, 2);\n" \
       "#else\n  gl_Position = vec4(p, 1);\n#endif\n}\n"
FRAG = '#version 450\n#include "light.glsl"\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(light()); }\n'
LIGHT = "float light() {\n#if TINT\n  return 0.5;\n#else\n  return float(LIGHTS);\n#endif\n}\n"


@pytest.fixture
def family(tmp_path: Path):
    for name, text in {"m/a.vert": VERT, "m/a.frag": FRAG, "m/light.glsl": LIGHT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return load_ruleset_text(FAMILY, "rules/t.yaml", materials_dir=tmp_path), SourceTree(tmp_path)


def key(tint=False, lights=1, skin=False) -> PermutationKey:
    return PermutationKey("t", "main", (("LIGHTS", lights), ("SKIN", skin), ("TINT", tint)))


def test_the_job_key_changes_with_every_input_of_the_compile(family) -> None:
    rs, tree = family
    options = JobOptions(compiler="glslang 1")
    request = CompileRequest("m/a.frag", "fragment", defines=(("LIGHTS", "1"),))
    closure = tree.closure("m/a.frag")
    base = job_key(request, closure, options)
    assert base == job_key(CompileRequest("m/a.frag", "fragment", defines=(("LIGHTS", "1"),)), closure, options)
    problem = (Diagnostic(Location("m/a.frag", 1), "bad"),)
    changed = [job_key(replace(request, **change), closure, options) for change in (
        {"defines": (("LIGHTS", "2"),)}, {"target": "vulkan1.3"}, {"optimize": True}, {"entry": "other"},
        {"relaxed": True}, {"auto_map": True}, {"version": "450"}, {"problems": problem}, {"source": "m/b.frag"})]
    changed.append(job_key(request, closure, JobOptions(compiler="glslang 2")))
    changed.append(job_key(request, (("m/a.frag", "0" * 64),), options))
    assert base not in changed and len(set(changed)) == len(changed)


def test_a_job_s_identity_ignores_contents_target_and_compiler(family) -> None:
    _, tree = family
    request = CompileRequest("m/a.frag", "fragment", defines=(("LIGHTS", "1"),))
    job = StageJob(request, tree.closure("m/a.frag"), JobOptions(compiler="a"), "k1")
    elsewhere = StageJob(replace(request, target="vulkan1.3"), (("m/a.frag", "f" * 64),), JobOptions(), "k2")
    assert job.identity == elsewhere.identity
    assert job.identity != StageJob(replace(request, defines=()), job.closure, job.options).identity


def test_make_job_projects_the_defines_onto_the_closure_and_optimizes_spirv_only(family) -> None:
    rs, tree = family
    defines = (("PASS_MAIN", "1"), ("LIGHTS", "2"), ("SKIN", "1"), ("TINT", "0"))
    options = JobOptions(compiler="c", optimize=True)
    frag = make_job(rs.sources["fragment"], "fragment", defines, tree, options)
    assert frag.request.defines == (("LIGHTS", "2"), ("TINT", "0")), "read only by the included file"
    assert [f for f, _ in frag.closure] == ["m/a.frag", "m/light.glsl"]
    assert frag.request.optimize and frag.request.target == "vulkan1.2" and frag.key == job_key(
        frag.request, frag.closure, options)
    vert = make_job(rs.sources["vertex"], "vertex", defines, ClosureCache(tree), options,
                    CompileTarget(target="webgl2", version="300 es"))
    assert vert.request.defines == (("SKIN", "1"),)
    assert (vert.request.target, vert.request.optimize, vert.request.version) == ("webgl2", False, "300 es")


def test_key_defines_lists_the_preamble_then_each_stage_s_projection(family) -> None:
    rs, tree = family
    doc = defines_by_stage(key(tint=True, lights=2, skin=True), rs, ClosureCache(tree))
    assert doc["preamble"] == [["PASS_MAIN", "1"], ["LIGHTS", "2"], ["SKIN", "1"], ["TINT", "1"]]
    assert doc["vertex"] == [["SKIN", "1"]] and doc["fragment"] == [["LIGHTS", "2"], ["TINT", "1"]]


def test_keys_differing_only_in_a_stage_s_unread_feature_share_its_job(family) -> None:
    rs, tree = family
    keys = [key(skin=False), key(skin=True), key(lights=2)]
    plan = plan_jobs(keys, {"t": rs}, tree, JobOptions(compiler="c"), exact=False)
    assert plan.stage_uses == 6 and not plan.exact and plan.merged == 0
    assert plan.stage_report() == {"fragment": {"uses": 3, "jobs": 2, "max_shared": 2},
                                   "vertex": {"uses": 3, "jobs": 2, "max_shared": 2}}
    assert plan.jobs_for(key(skin=False))["fragment"] == plan.jobs_for(key(skin=True))["fragment"]
    assert plan.all_jobs_for(key()) == list(plan.jobs_for(key()).values()) and plan.jobs_for(key(lights=4)) == {}
    assert plan.own[key(skin=True)]["vertex"].request.defines == (("SKIN", "1"),)


def test_the_planner_takes_a_recorded_exact_key_and_keeps_a_key_out_when_asked(family, monkeypatch) -> None:
    import pipeline.plan.jobs as jobs

    rs, tree = family
    asked: list[str] = []

    def recorded(define_keys: list[str]) -> dict[str, str]:
        asked.extend(define_keys)
        return {k: "exact-" + k[:8] for k in define_keys}

    monkeypatch.setattr(jobs, "default_preprocessor", lambda tree: pytest.fail("a recorded job was preprocessed"))
    planner = Planner({"t": rs}, tree, JobOptions(compiler="c"), recorded=recorded)
    made = planner.add(key(), keep=False)
    assert planner.plan.stages == {} and planner.plan.own == {}
    assert {job.key for job in made["vulkan1.2"].values()} == {"exact-" + k[:8] for k in asked} and len(asked) == 2
    planner.add(key())
    assert len(asked) == 2, "a define-based key is looked up once per plan"
    assert set(planner.plan.jobs) == {"exact-" + k[:8] for k in asked} and planner.plan.preprocessed == {}


def test_the_default_preprocessor_applies_defines_and_refuses_what_it_cannot_read(family) -> None:
    rs, tree = family
    preprocess = default_preprocessor(tree)
    assert preprocess is not None, "glslang's C API loads here"
    text = preprocess(CompileRequest("m/a.frag", "fragment", defines=(("LIGHTS", "2"), ("TINT", "0"))))
    assert "return float(2);" in text and "LIGHTS" not in text and "#include" not in text
    assert "0.5" not in text, "the branch TINT drops is gone"
    (tree.root / "m" / "broken.frag").write_text('#version 450\n#include "nowhere.glsl"\nvoid main() {}\n')
    assert preprocess(CompileRequest("m/broken.frag", "fragment")) is None
    assert preprocess(CompileRequest("m/a.frag", "fragment", language="hlsl")) is None


def test_primary_stages_prefer_the_first_vulkan_target() -> None:
    per_target = {"webgl2": {"vertex": "w"}, "vulkan1.3": {"vertex": "a"}, "vulkan1.0": {"vertex": "b"}}
    assert primary_stages(per_target) == {"vertex": "a"}
    assert primary_stages({"opengl4.5": {"vertex": "g"}, "webgl2": {"vertex": "w"}}) == {"vertex": "g"}


def test_targets_come_from_the_options_then_the_family_then_the_default(family) -> None:
    rs, _ = family
    assert JobOptions(target="vulkan1.1").targets(rs) == (CompileTarget(target="vulkan1.1"),)
    assert not JobOptions().explicit(rs)
    own = msgspec.structs.replace(rs, compile=(CompileTarget(target="webgl2"),))
    assert JobOptions(target="vulkan1.1").targets(own) == (CompileTarget(target="webgl2"),)
    assert JobOptions().explicit(own)
    chosen = JobOptions(compile=(("t", (CompileTarget(target="opengl4.5"),)), ("other", ())))
    assert chosen.targets(own) == (CompileTarget(target="opengl4.5"),) and chosen.explicit(rs)


def test_blobs_of_keeps_the_stages_that_compiled_and_whose_blob_is_there() -> None:
    results = {"j1": JobResult("b1"), "j2": JobResult(None), "j3": JobResult("b3")}
    jobs = {"vertex": "j1", "fragment": "j2", "compute": "j3", "missing": "j4"}
    assert blobs_of(jobs, results, lambda blob: True) == {"compute": "b3", "vertex": "b1"}
    assert blobs_of(jobs, results, lambda blob: blob != "b3") == {"vertex": "b1"}


def test_an_unknown_compile_family_is_a_warning_with_a_suggestion() -> None:
    warnings = unknown_compile_families({"zeta": (), "pbrr": (), "pbr": ()}, ["pbr", "chain"])
    assert warnings[0].startswith("pipeline.toml: warning: [cook.compile] names 'pbrr', which is no shader family")
    assert "did you mean 'pbr'" in warnings[0]
    assert warnings[1] == "pipeline.toml: warning: [cook.compile] names 'zeta', which is no shader family"
    assert len(warnings) == 2 and unknown_compile_families({}, ["pbr"]) == []


def test_a_job_plan_reports_shared_jobs_per_target_of_a_key() -> None:
    def job(stage: str) -> StageJob:
        return StageJob(CompileRequest("a", stage), (), JobOptions())

    k1, k2 = key(), key(lights=2)
    plan = JobPlan(jobs={"v": job("vertex"), "f1": job("fragment"), "f2": job("fragment")},
                   stages={k1: {"vertex": "v", "fragment": "f1"}, k2: {"vertex": "v", "fragment": "f1"}},
                   targets={k2: {"vulkan1.2": {"vertex": "v", "fragment": "f1"}, "webgl2": {"fragment": "f2"}}})
    assert sorted(plan.all_jobs_for(k2)) == ["f1", "f2", "v"]
    assert plan.stage_report() == {"fragment": {"uses": 3, "jobs": 2, "max_shared": 2},
                                   "vertex": {"uses": 2, "jobs": 1, "max_shared": 2}}


CHAIN = "shader: c\nkind: fragments\nfeatures: {}\nfragments: [v.glsl, o.glsl]\npasses: {main: {}}\n"


def test_generated_jobs_are_named_after_their_text_per_target_and_a_failed_one_is_one_job(tmp_path: Path) -> None:
    (tmp_path / "v.glsl").write_text("//! stage vertex\nvoid run() { gl_Position = vec4(0); }\n")
    (tmp_path / "o.glsl").write_text("//! stage fragment\nlayout(location=0) out vec4 o;\n"
                                     "void run() { o = vec4(1); }\n")
    rs, tree = load_ruleset_text(CHAIN, "rules/c.yaml", materials_dir=tmp_path), SourceTree(tmp_path)
    options = JobOptions(compiler="c", compile=(("c", (CompileTarget(target="vulkan1.0"),
                                                       CompileTarget(target="opengl4.5"))),))
    chain_key = PermutationKey("c", "main", ())
    made = generated_jobs(rs, chain_key, {}, tree, options)
    assert list(made) == ["vulkan1.0", "opengl4.5"]
    for target, stages in made.items():
        for stage, suffix, fragment in (("vertex", "vert", "v.glsl"), ("fragment", "frag", "o.glsl")):
            request = stages[stage].request
            assert request.source == f"generated/{bytes_hash(request.text.encode())[:16]}.{suffix}"
            assert request.target == target and request.stage == stage and request.problems == ()
            assert stages[stage].closure == ((fragment, tree.parsed(fragment).sha256),)
    assert made["vulkan1.0"]["vertex"].key != made["opengl4.5"]["vertex"].key
    (tmp_path / "o.glsl").write_text("//! stage fragment\nvoid helper() {}\n")
    failed = generated_jobs(rs, chain_key, {}, tree, JobOptions(compiler="c"))["vulkan1.2"]
    assert failed["vertex"].key == failed["fragment"].key, "a failed generation is one job"
    request = failed["vertex"].request
    assert (request.stage, request.text, request.source) == ("fragment", None, f"generated/{bytes_hash(b'')[:16]}.frag")
    assert [str(p.location) for p in request.problems] == [tree.name("o.glsl") + ":2:1"]


def test_hlsl_register_shifts_are_in_the_job_key_and_come_from_the_target(tmp_path: Path) -> None:
    options = JobOptions(compiler="c")
    hlsl = CompileRequest("s.hlsl", "fragment", language="hlsl", entry="PSMain")
    moved = replace(hlsl, registers=(("b", 0), ("t", 8)))
    assert job_key(hlsl, (), options) != job_key(moved, (), options)
    glsl = CompileRequest("a.frag", "fragment")
    assert job_key(glsl, (), options) == job_key(replace(glsl, registers=(("b", 0),)), (), options)  # GLSL: unused

    class Source:
        file, language, entry = "s.hlsl", "hlsl", "PSMain"

    (tmp_path / "s.hlsl").write_text("float4 PSMain() : SV_Target0 { return 1; }\n")
    tree = SourceTree(tmp_path)
    target = convert({"target": "vulkan1.2", "registers": {"t": 8, "b": 0}}, CompileTarget)
    assert make_job(Source(), "fragment", (), tree, options, target).request.registers == (("b", 0), ("t", 8))
    assert make_job(Source(), "fragment", (), tree, options).request.registers == hlsl.registers  # the default


def test_a_metal_or_webgpu_job_key_names_its_finishing_tool_and_metal_its_msl_options(family, monkeypatch) -> None:
    from pipeline.plan import job_keys as jobs_module

    _, tree = family
    options, closure = JobOptions(compiler="c"), tree.closure("m/a.frag")
    metal = CompileRequest("m/a.frag", "fragment", target="metal")
    base = job_key(metal, closure, options)
    changed = {job_key(replace(metal, msl_version="3.0"), closure, options),
               job_key(replace(metal, argument_buffers=True), closure, options),
               job_key(replace(metal, target="webgpu"), closure, options),
               job_key(replace(metal, target="vulkan1.2"), closure, options)}
    assert base not in changed and len(changed) == 4
    vulkan = CompileRequest("m/a.frag", "fragment")
    assert "finisher" not in jobs_module._flags(vulkan) and "msl" not in jobs_module._flags(vulkan)
    monkeypatch.setattr(jobs_module, "finisher_identity", lambda target: "spirv-cross other build")
    assert job_key(metal, closure, options) != base  # another SPIRV-Cross build: another job


def test_a_metal_target_s_options_reach_its_requests(family) -> None:
    rs, tree = family
    target = CompileTarget(target="metal", msl_version="3.0", argument_buffers=True)
    job = make_job(rs.sources["fragment"], "fragment", (), tree, JobOptions(), target)
    assert (job.request.target, job.request.msl_version, job.request.argument_buffers) == ("metal", "3.0", True)
    plain = make_job(rs.sources["fragment"], "fragment", (), tree, JobOptions(), CompileTarget(target="metal"))
    assert (plain.request.msl_version, plain.request.argument_buffers) == ("2.1", False)
