"""The metal target's MSL (compilers/msl.py): SPIRV-Cross run on validated SPIR-V with the request's MSL
version and argument-buffer choice, its text checked for the stage's entry point, its build named."""

from __future__ import annotations


import pytest
from target_helpers import GL_ERA, compile_pair, pair

from pipeline.compilers import msl
from pipeline.structs import replace


@pytest.fixture(scope="module")
def spirv() -> dict[str, bytes]:
    outputs = compile_pair("portable", "vulkan1.2", (("TEXTURED", "1"), ("VERTEX_COLOR", "0")), **GL_ERA)
    assert all(o.ok for o in outputs.values()), outputs
    return {stage: o.spirv for stage, o in outputs.items()}


def test_msl_version_is_spirv_cross_s_number() -> None:
    assert (msl.msl_number("2.1"), msl.msl_number("3.0"), msl.msl_number("1.2")) == ("20100", "30000", "10200")


def test_each_stage_becomes_msl_naming_its_entry_point(spirv) -> None:
    requests = pair("portable", "metal", **GL_ERA)
    texts = {stage: msl.to_msl(spirv[stage], requests[stage]).decode() for stage in spirv}
    assert "#include <metal_stdlib>" in texts["vertex"]
    assert "vertex main0_out main0(" in texts["vertex"] and "fragment main0_out main0(" in texts["fragment"]
    assert "texture2d<float> u_baseColorTexture" in texts["fragment"]


def test_the_msl_version_and_argument_buffers_change_the_text(spirv) -> None:
    request = pair("portable", "metal", **GL_ERA)["fragment"]
    plain = msl.to_msl(spirv["fragment"], request)
    buffers = msl.to_msl(spirv["fragment"], replace(request, argument_buffers=True)).decode()
    assert "spvDescriptorSetBuffer0" in buffers and "spvDescriptorSetBuffer0" not in plain.decode()
    assert "--msl-version" in msl.command(request, "x.spv") and "30000" in msl.command(
        replace(request, msl_version="3.0"), "x.spv")


def test_a_module_spirv_cross_refuses_is_a_translate_error(spirv) -> None:
    request = pair("portable", "metal", **GL_ERA)["fragment"]
    with pytest.raises(msl.TranslateError, match="SPIRV-Cross cannot write MSL"):
        msl.to_msl(b"\x03\x02\x23\x07" + b"\0" * 16, request)


@pytest.mark.parametrize("text,problem", [
    ("", "empty"),
    ("#include <metal_stdlib>\nvertex float4 other0() {}\n", "declares no fragment function 'main0'"),
    ("fragment main0_out main0(main0_in in [[stage_in]])\n{}", None),
])
def test_the_text_check_wants_the_stage_s_entry_point(text: str, problem: str | None) -> None:
    request = pair("portable", "metal", **GL_ERA)["fragment"]
    found = msl.text_problem(request, text)
    assert (found is None) if problem is None else (problem in found)


def test_an_entry_point_other_than_main_keeps_its_name() -> None:
    request = replace(pair("portable", "metal", **GL_ERA)["vertex"], entry="VSMain")
    assert msl.entry_name(request) == "VSMain"
    assert msl.text_problem(request, "vertex Out VSMain(In in [[stage_in]]) {}") is None


def test_the_identity_names_the_tool_s_build() -> None:
    identity = msl.identity()
    assert identity.startswith("spirv-cross ") and "sha256:" in identity


def test_without_spirv_cross_the_metal_target_is_a_toolchain_error_naming_it(monkeypatch) -> None:
    from pipeline.compilers.toolchain import ToolchainError

    monkeypatch.setattr(msl.shutil, "which", lambda name: None)
    msl.executable.cache_clear()
    try:
        with pytest.raises(ToolchainError, match="Debian package spirv-cross") as caught:
            msl.executable()
        assert caught.value.where == "spirv-cross"
    finally:
        msl.executable.cache_clear()
