"""Every target of one rule file cooked and loaded by its real client: a GL-era pair (tests/data/targets)
cooked for relaxed Vulkan 1.2, webgl2, metal and webgpu; ``pipeline runtime check`` creates its Vulkan
pipeline states on lavapipe, links its GLSL ES programs in Mesa's GL driver through EGL, makes its WebGPU
modules (WGSL written by naga) and render pipelines through wgpu, and says Metal has no client here.  What one target cannot
express fails that target alone; what only a client sees (a varying whose type differs) fails the check."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from family_worlds import triangle_world
from runtime_helpers import needs_egl, needs_naga, needs_vulkan, needs_wgpu
from target_helpers import MATERIALS, TARGETS_DATA

from pipeline.cli import main
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader

pytestmark = [needs_vulkan, needs_egl, needs_wgpu, needs_naga]
PLAIN = [({"name": "plain"}, ()), ({"name": "colored"}, ("COLOR_0",))]
TEXTURED = ({"name": "textured", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}, ("TEXCOORD_0",))
GL_ERA = 'relaxed = true, auto_map = true, version = "310 es"'


def cook(tmp_path: Path, rules: Path, materials: list, toml: str = ""):
    world = triangle_world(tmp_path / "world", rules, MATERIALS, materials, toml)
    cooked = CliRunner().invoke(main, ["cook", str(world), "--out", str(tmp_path / "out"),
                                       "--cache", str(tmp_path / "cache"), "-q"])
    return cooked, mf.load_chunk_manifest(tmp_path / "out" / "level" / "props.json")


def check(out: Path) -> tuple[dict, int, str]:
    run = CliRunner().invoke(main, ["runtime", "check", str(out), "--json"])
    text = CliRunner().invoke(main, ["runtime", "check", str(out), "-q"])
    return json.loads(run.stdout), run.exit_code, text.output


def test_one_family_cooks_for_every_target_and_each_client_loads_it(tmp_path: Path) -> None:
    cooked, manifest = cook(tmp_path, TARGETS_DATA / "rules", PLAIN)
    assert cooked.exit_code == 0, cooked.output
    labels = {"vulkan1.2-relaxed", "webgl2", "metal-relaxed-msl2.1", "webgpu-relaxed"}
    assert all(set(e.targets) == labels for e in manifest.keys.values()) and len(manifest.keys) == 2
    pak = PakReader(mf.library_path(tmp_path / "out"))
    entry = manifest.keys["portable/forward{TEXTURED=0,VERTEX_COLOR=1}"]
    assert pak.get(entry.targets["metal-relaxed-msl2.1"]["vertex"]).startswith(b"#include <metal_stdlib>")
    wgsl = pak.get(entry.targets["webgpu-relaxed"]["fragment"]).decode()
    assert "@fragment \nfn main(@location(0) v_color: vec4<f32>" in wgsl  # WGSL text, for a browser too
    assert pak.reflection(entry.targets["webgpu-relaxed"]["fragment"]) is None  # text: no reflection, as MSL
    assert pak.get(entry.targets["webgl2"]["vertex"]).startswith(b"#version 300 es")
    report, code, text = check(tmp_path / "out")
    assert code == 0 and report["pipelines"] == report["created"] == 2 and report["validation_errors"] == []
    targets = {t["target"]: t for t in report["targets"]}
    assert set(targets) == labels - {"vulkan1.2-relaxed"}
    for label in ("webgl2", "webgpu-relaxed"):
        assert (targets[label]["programs"], targets[label]["created"], targets[label]["failed"]) == (2, 2, [])
    assert "through EGL" in targets["webgl2"]["client"] and "through wgpu" in targets["webgpu-relaxed"]["client"]
    assert targets["metal-relaxed-msl2.1"]["client"] is None
    assert "metal-relaxed-msl2.1: 2 programs not loaded: no Metal compiler or device runs here" in text
    assert "webgl2: 2 of 2 programs made by" in text


def test_what_webgpu_cannot_express_fails_that_target_only(tmp_path: Path) -> None:
    cooked, manifest = cook(tmp_path, TARGETS_DATA / "rules", [*PLAIN, TEXTURED])
    assert cooked.exit_code == 1
    errors = [line for line in cooked.output.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "portable.frag: error: webgpu: naga cannot translate the SPIR-V to WGSL" in errors[0]
    assert "combined image samplers" in errors[0] and "TEXTURED=1" in errors[0]
    entry = manifest.keys["portable/forward{TEXTURED=1,VERTEX_COLOR=0}"]
    assert set(entry.targets["webgpu-relaxed"]) == {"vertex"}  # the fragment stage failed, for webgpu alone
    assert all(set(entry.targets[t]) == {"vertex", "fragment"}
               for t in ("vulkan1.2-relaxed", "webgl2", "metal-relaxed-msl2.1"))
    report, code, _ = check(tmp_path / "out")
    assert code == 0 and report["created"] == report["pipelines"] == 3
    assert {t["target"]: t["created"] for t in report["targets"]}["webgl2"] == 3


def test_a_gles_pair_whose_varying_types_disagree_fails_the_gl_link(tmp_path: Path) -> None:
    cooked, _ = cook(tmp_path, TARGETS_DATA / "mismatch_rules", PLAIN[:1])
    assert cooked.exit_code == 0, cooked.output  # each stage alone passes glslang's ES front end
    report, code, text = check(tmp_path / "out")
    (gl,) = report["targets"]
    assert code == 1 and gl["created"] == 0
    assert ("level/props (key mismatch/forward{VERTEX_COLOR=0}): error: webgl2 program: GL driver: error: vertex "
            "shader output `v_shade' declared as type `vec3', but fragment shader input declared as type `vec4'") in text


def test_webgpu_stages_that_do_not_agree_fail_the_render_pipeline(tmp_path: Path) -> None:
    toml = f"[cook.compile]\nmismatch = [{{target = \"webgpu\", {GL_ERA}}}]\n"
    cooked, _ = cook(tmp_path, TARGETS_DATA / "mismatch_rules", PLAIN[:1], toml)
    assert cooked.exit_code == 0, cooked.output  # naga accepts each stage alone
    report, code, text = check(tmp_path / "out")
    (webgpu,) = report["targets"]
    assert code == 1 and (webgpu["target"], webgpu["created"]) == ("webgpu-relaxed", 0)
    assert "error: webgpu-relaxed pipeline: wgpu: Error matching ShaderStages(FRAGMENT)" in text
