"""One MaterialX text for every target (plan/generate/mx_targets.py): MaterialX's Vulkan, WGSL-ready and ESSL
generators under their targets' guards, the Vulkan branch exactly the Vulkan generator's text."""

from __future__ import annotations

import os
from pathlib import Path

import MaterialX as mx
import pytest

from pipeline.compilers import CompileRequest, SourceTree, compile_one, default_backend
from pipeline.plan.generate import mx_targets
from pipeline.plan.generate.mx_graph import MATERIAL, TEXTURE_FEATURES, gltf_pbr_document
from pipeline.plan.generate.mx_targets import (
    GUARDED,
    VULKAN,
    copied_by_member,
    generate_stages,
    loose_varyings,
    portable_text,
)

SUFFIX = {"vertex": "vert", "fragment": "frag"}


@pytest.fixture(scope="module")
def generated() -> dict[str, dict[str, str]]:
    """Each generator's stages of the gltf_pbr graph with every texture slot."""
    document = gltf_pbr_document(frozenset(TEXTURE_FEATURES))  # held: its nodes live while it does
    node = mx.getShaderNodes(document.getChild(MATERIAL))[0]
    return {gen: generate_stages(gen, node, "t") for gen in (VULKAN, *(g for _, _, g in GUARDED))}


def _portable(generated: dict[str, dict[str, str]], stage: str) -> str:
    return portable_text(generated[VULKAN][stage], {g: generated[g][stage] for _, _, g in GUARDED})


def _compile(text: str, stage: str, target: str, tmp_path: Path):
    request = CompileRequest(f"generated/t.{SUFFIX[stage]}", stage, text=text, target=target)
    return compile_one(request, SourceTree(tmp_path), default_backend())


def test_the_vulkan_branch_is_the_vulkan_generator_s_text(generated) -> None:
    for stage, vulkan in generated[VULKAN].items():
        text = _portable(generated, stage)
        head, _, body = vulkan.partition("\n")
        assert text.startswith(f"{head}\n// MaterialX {mx.getVersionString()}: {VULKAN}; ")
        assert text.endswith("\n#else\n" + body.rstrip("\n") + "\n#endif\n")
        assert text.count("#version") == 1
        branches = [line for line in text.split("\n") if line.startswith(("#if defined", "#elif defined"))]
        assert branches == ["#if defined(PIPELINE_TARGET_WEBGPU)", "#elif defined(GL_ES)"]


@pytest.mark.parametrize("target", ["vulkan1.2", "metal"])
def test_vulkan_and_metal_blobs_are_those_of_the_vulkan_text(generated, target: str, tmp_path: Path) -> None:
    for stage, vulkan in generated[VULKAN].items():
        alone, portable = _compile(vulkan, stage, target, tmp_path), _compile(_portable(generated, stage), stage,
                                                                               target, tmp_path)
        assert alone.ok and portable.ok, (alone.diagnostics, portable.diagnostics)
        assert portable.spirv == alone.spirv, (target, stage)


@pytest.mark.parametrize("target", ["webgl2", "webgpu"])
def test_the_web_targets_compile_the_portable_text_and_not_the_vulkan_one(generated, target: str,
                                                                          tmp_path: Path) -> None:
    for stage, vulkan in generated[VULKAN].items():
        portable = _compile(_portable(generated, stage), stage, target, tmp_path)
        assert portable.ok, portable.diagnostics
        blob = portable.spirv.decode()
        assert blob.startswith("#version 300 es\n") if target == "webgl2" else "@group(0)" in blob
    assert not _compile(generated[VULKAN]["fragment"], "fragment", target, tmp_path).ok


def test_naga_needs_the_webgpu_branch_s_struct_copies_and_varyings_rewritten(generated, monkeypatch,
                                                                             tmp_path: Path) -> None:
    monkeypatch.setattr(mx_targets, "for_naga", lambda text: text)
    failed = _compile(_portable(generated, "fragment"), "fragment", "webgpu", tmp_path)
    assert not failed.ok and "webgpu: naga cannot translate the SPIR-V to WGSL" in failed.errors[0].message
    monkeypatch.setattr(mx_targets, "for_naga", copied_by_member)  # the struct copies alone: the varyings fail
    failed = _compile(_portable(generated, "fragment"), "fragment", "webgpu", tmp_path)
    assert not failed.ok and "entry point inputs or outputs" in failed.errors[0].message


def test_a_generator_that_fails_leaves_an_error_naming_its_target_in_its_branch_only(generated,
                                                                                      tmp_path: Path) -> None:
    made = {g: generated[g]["fragment"] for _, _, g in GUARDED}
    made["WgslShaderGenerator"] = RuntimeError("no implementation\nfor node 'x'")
    text = portable_text(generated[VULKAN]["fragment"], made)
    webgpu = text.split("#if defined(PIPELINE_TARGET_WEBGPU)\n", 1)[1].split("\n#elif", 1)[0]
    assert webgpu == ("#error webgpu MaterialX WgslShaderGenerator cannot generate the graph because "
                      "no implementation for node x")
    failed = _compile(text, "fragment", "webgpu", tmp_path)
    assert not failed.ok and failed.errors[0].location.line == 4
    assert failed.errors[0].message == ("'#error' : webgpu MaterialX WgslShaderGenerator cannot generate the graph "
                                       "because no implementation for node x")
    assert _compile(text, "fragment", "vulkan1.2", tmp_path).ok and _compile(text, "fragment", "webgl2", tmp_path).ok


BLOCK_TEXT = """struct LightData
{
    int light_type;
    vec3 direction;
};
struct Arrayed { float w[2]; };
layout (std140, binding=3) uniform LightData_pixel
{
    LightData u_lightData[MAX_LIGHT_SOURCES];
    Arrayed u_arrayed[2];
};
void f(int k)
{
    sample(u_lightData[k + 1], u_lightData[k].direction, u_arrayed[k]);
}
"""


def test_a_struct_element_of_a_block_is_built_member_by_member() -> None:
    text = copied_by_member(BLOCK_TEXT)
    assert "    LightData u_lightData[MAX_LIGHT_SOURCES];\n" in text  # the declaration stays
    assert ("};\n\nLightData u_lightData_at(int i)\n{\n    return LightData(u_lightData[i].light_type, "
            "u_lightData[i].direction);\n}\n") in text
    assert "sample(u_lightData_at(k + 1), u_lightData[k].direction, u_arrayed[k]);" in text  # a member read stays
    assert "u_arrayed_at" not in text  # a struct with an array member is left as it is
    assert copied_by_member("void main() {}\n") == "void main() {}\n"


VARYING_TEXT = """layout (location = 2) out VertexData
{
    vec2 texcoord_0;
    mat3 frame;
    vec3 normalWorld;
} vd;

void main() { vd.normalWorld = vd.frame[0]; vdx.normalWorld = vec3(0.0); }
"""


def test_a_varying_block_becomes_one_varying_per_member_at_the_block_s_locations() -> None:
    text = loose_varyings(VARYING_TEXT)
    assert text.startswith("layout (location = 2) out vec2 vd_texcoord_0;\n"
                           "layout (location = 3) out mat3 vd_frame;\n"
                           "layout (location = 6) out vec3 vd_normalWorld;\n\n")
    assert "vd_normalWorld = vd_frame[0]; vdx.normalWorld = vec3(0.0);" in text
    unknown = VARYING_TEXT.replace("mat3 frame;", "Frame frame;")
    assert loose_varyings(unknown) == unknown  # a member whose locations are not known: left as it is


def test_materialx_s_bool_warning_is_dropped_and_anything_else_on_stderr_kept(capfd) -> None:
    with mx_targets._handled_warnings():
        os.write(2, b"Warning: WGSL does not allow boolean types to be stored in uniform or storage address spaces.\n")
        os.write(2, b"something else\n")
    assert capfd.readouterr().err == "something else\n"
    document = gltf_pbr_document(frozenset())
    node = mx.getShaderNodes(document.getChild(MATERIAL))[0]
    made = generate_stages("WgslShaderGenerator", node, "t")  # u_refractionTwoSided: a bool uniform
    assert "bool(u_refractionTwoSided)" in made["fragment"] and capfd.readouterr().err == ""
