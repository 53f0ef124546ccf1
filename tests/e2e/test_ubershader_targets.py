"""Compile targets end to end with the real compiler, on both backends: webgl2 (validated
GLSL ES text), opengl4.5 and Vulkan SPIR-V (spirv-val per environment), relaxed rules and
automatic mapping for loose uniforms, #version for sources without one, both include forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend, validate
from pipeline.plan.jobs import JobOptions, plan_jobs
from pipeline.config import CompileTarget, parse_world_config
from pipeline.keys.key import PermutationKey
from pipeline.rules.load import load_ruleset_text, load_rulesets
from paths import TESTS

DATA = TESTS / "data" / "ubershader"
BACKENDS = ("capi", "cli")
TARGETS = [dict(target="webgl2"), dict(target="es3.0"), dict(target="opengl4.5", auto_map=True, version="310 es"),
           dict(target="vulkan1.2", relaxed=True, auto_map=True, version="310 es"),
           dict(target="vulkan1.0", relaxed=True, auto_map=True, version="310 es")]
FRAGMENT = (("ALPHAMODE_OPAQUE", "0"), ("ALPHAMODE_MASK", "1"), ("ALPHAMODE", "ALPHAMODE_MASK"),
            ("HAS_NORMAL_VEC3", "1"), ("HAS_BASE_COLOR_MAP", "1"), ("LIGHT_COUNT", "3"))
VERTEX = (("HAS_NORMAL_VEC3", "1"), ("HAS_TEXCOORD_0_VEC2", "1"), ("USE_MORPHING", "1"), ("WEIGHT_COUNT", "2"),
          ("HAS_MORPH_TARGET_POSITION", "1"), ("USE_SKINNING", "1"))


@pytest.fixture(scope="module")
def tree() -> SourceTree:
    return SourceTree(DATA / "materials")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t["target"])
@pytest.mark.parametrize("stage,source,defines", [("fragment", "legacy/pbr.frag", FRAGMENT),
                                                  ("vertex", "legacy/primitive.vert", VERTEX)])
def test_legacy_sources_compile_and_validate(tree, backend, target, stage, source, defines) -> None:
    request = CompileRequest(source, stage, defines=defines, **target)
    out = compile_one(request, tree, get_backend(backend))
    assert out.ok, [str(d) for d in out.errors]
    if target["target"] in ("webgl2", "es3.0"):
        text = out.spirv.decode()
        assert text.startswith("#version 300 es\n")
        assert "#line" not in text and "#extension GL_GOOGLE" not in text and "LIGHT_COUNT" not in text
        assert ("u_Lights[3 + 1]" in text) == (stage == "fragment")
        assert "clampedDot" in text or stage == "vertex"  # <legacy/functions.glsl> was included
    else:
        assert out.spirv[:4] == b"\x03\x02\x23\x07"
        assert validate(out.spirv, target["target"]) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_loose_uniforms_need_relaxed_rules_for_vulkan(tree, backend) -> None:
    strict = CompileRequest("legacy/pbr.frag", "fragment", defines=FRAGMENT, target="vulkan1.2", version="310 es",
                            auto_map=True)
    out = compile_one(strict, tree, get_backend(backend))
    assert not out.ok
    assert (out.errors[0].location.file, out.errors[0].location.line) == (tree.named_root + "legacy/textures.glsl", 11)
    assert "non-opaque uniforms outside a block" in out.errors[0].message
    unmapped = compile_one(CompileRequest("legacy/pbr.frag", "fragment", defines=FRAGMENT, target="vulkan1.2",
                                          version="310 es", relaxed=True), tree, get_backend(backend))
    assert not unmapped.ok and "location" in unmapped.errors[0].message


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("target", TARGETS[:1] + TARGETS[2:4], ids=lambda t: t["target"])
def test_errors_keep_their_lines_when_the_version_is_injected(tmp_path: Path, backend, target) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "lib.glsl").write_text("float lib() { return 1.0; }\n")
    (tmp_path / "bad.frag").write_text("precision highp float;\n#include <inc/lib.glsl>\nout vec4 c;\n"
                                       "void main() {\n    c = vec4(lib() + missing_name);\n}\n")
    request = CompileRequest("bad.frag", "fragment", **target)
    out = compile_one(request, SourceTree(tmp_path), get_backend(backend))
    assert not out.ok
    assert [(d.location.file, d.location.line) for d in out.errors][:1] == [(f"{tmp_path.resolve()}/bad.frag", 5)]
    assert "missing_name" in out.errors[0].message


def test_the_target_is_part_of_the_job_key_and_each_target_has_its_jobs(tree) -> None:
    (rs,) = load_rulesets(DATA / "rules")
    text = ("legacy/forward{ALPHAMODE=OPAQUE,ATTRIBUTES=HAS_POSITION_VEC3,HAS_BASE_COLOR_MAP=0,HAS_EMISSIVE_MAP=0,"
            "HAS_METALLIC_ROUGHNESS_MAP=0,HAS_NORMAL_MAP=0,HAS_OCCLUSION_MAP=0,LIGHT_COUNT=2,"
            "MATERIAL_EMISSIVE_STRENGTH=0,MATERIAL_TRANSMISSION=0,MATERIAL_UNLIT=0,MORPH_TARGETS=,USE_MORPHING=0,"
            "USE_SKINNING=0,WEIGHT_COUNT=0}")
    key = PermutationKey.parse(text, [rs])
    plan = plan_jobs([key], {"legacy": rs}, tree, JobOptions(compiler="x"))
    assert list(plan.targets[key]) == ["webgl2", "opengl4.5", "vulkan1.2-relaxed"]
    assert len(plan.jobs) == 6 and plan.stage_uses == 6
    assert plan.stages[key] == plan.targets[key]["vulkan1.2-relaxed"]
    fragment = {plan.jobs[j].request.target: plan.jobs[j].request for t in plan.targets[key].values()
                for s, j in t.items() if s == "fragment"}
    assert dict(fragment["webgl2"].defines)["LIGHT_COUNT"] == "2"  # used only as an array size: kept
    override = parse_world_config('[cook.compile]\nlegacy = {target = "opengl4.5", auto_map = true, '
                                  'version = "310 es"}\n').cook.compile
    only_gl = plan_jobs([key], {"legacy": rs}, tree, JobOptions(compiler="x", compile=tuple(override.items())))
    assert list(only_gl.targets[key]) == ["opengl4.5"] and len(only_gl.jobs) == 2
    assert set(only_gl.jobs) <= set(plan.jobs)  # same request, same key
    assert JobOptions().targets(rs)[2] == CompileTarget(target="vulkan1.2", relaxed=True, auto_map=True,
                                                        version="310 es")


def test_identical_preprocessed_text_is_one_job(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "a.frag").write_text(
        "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() {\n#if A\n    c = vec4(B);\n#else\n"
        "    c = vec4(0.0);\n#endif\n}\n")
    (tmp_path / "r.yaml").write_text(
        "shader: t\nsources: {vertex: m/a.frag, fragment: m/a.frag}\nfeatures:\n  A: {type: bool}\n"
        "  B: {values: [1, 2]}\npasses:\n  main: {}\n")
    rs = load_ruleset_text((tmp_path / "r.yaml").read_text(), "r.yaml")
    keys = [PermutationKey("t", "main", (("A", False), ("B", 1))), PermutationKey("t", "main", (("A", False), ("B", 2))),
            PermutationKey("t", "main", (("A", True), ("B", 2)))]
    tree = SourceTree(tmp_path)
    by_defines = plan_jobs(keys, {"t": rs}, tree, JobOptions(compiler="x"), exact=False)
    exact = plan_jobs(keys, {"t": rs}, tree, JobOptions(compiler="x"))
    assert len(by_defines.jobs) == 2 * 3  # B is named in code, so it survives projection
    assert exact.exact and len(exact.jobs) == 2 * 2 and exact.merged == 2


def test_pipeline_toml_replaces_a_family_s_targets(tmp_path: Path) -> None:
    import json

    from robust_helpers import document

    from pipeline import api
    from pipeline.outputs.manifest import load_chunk_manifest

    world = tmp_path / "world"
    (world / "props").mkdir(parents=True)
    (world / "props" / "tri.gltf").write_text(json.dumps(document()))
    (world / "pipeline.toml").write_text(
        f'rules = "{DATA / "rules"}"\nmaterials = "{DATA / "materials"}"\n'
        '[cook.compile]\nlegacy = "webgl2"\nlegcy = "opengl4.5"\n')
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    assert result.errors == []
    assert any("[cook.compile] names 'legcy', which is no shader family (did you mean 'legacy'?)" in w
               for w in result.warnings)
    manifest = load_chunk_manifest(tmp_path / "out" / "props.json")
    (entry,) = manifest.keys.values()
    assert list(entry.targets) == ["webgl2"] and entry.stages == entry.targets["webgl2"]
    assert {job.request.target for job in result.plan.jobs.values()} == {"webgl2"}


@pytest.mark.parametrize("call", ["preprocess", "compile"])
def test_ctrl_c_inside_an_include_callback_reaches_the_caller(tree, monkeypatch, call) -> None:
    # the parent preprocesses while planning: a Ctrl-C landing in a ctypes callback must not be swallowed
    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt
    backend = get_backend("capi")
    monkeypatch.setattr(SourceTree, "resolve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        getattr(backend, call)(CompileRequest("legacy/pbr.frag", "fragment", target="webgl2"), tree)
    monkeypatch.undo()
    assert backend.preprocess(CompileRequest("legacy/pbr.frag", "fragment", target="webgl2", defines=FRAGMENT), tree)
