"""The finishing step of metal and webgpu jobs (compilers/targets.py), through the one compile entry point:
what a target cannot express fails that target's job alone, located at the stage's file."""

from __future__ import annotations

from runtime_helpers import needs_naga, needs_wgpu
from target_helpers import GL_ERA, MATERIALS, compile_pair, pair

from pipeline.compilers import targets
from pipeline.compilers.request import CompileOutput
from pipeline.compilers.sources import SourceTree

TEXTURED = (("TEXTURED", "1"), ("VERTEX_COLOR", "0"))


def test_only_metal_and_webgpu_have_a_finishing_tool() -> None:
    assert targets.finisher_identity("vulkan1.2") is None and targets.finisher_identity("webgl2") is None
    assert targets.finisher_identity("metal").startswith("spirv-cross ")


def test_a_metal_job_gives_msl_text() -> None:
    outputs = compile_pair("portable", "metal", TEXTURED, **GL_ERA)
    assert all(o.ok for o in outputs.values()), outputs
    assert outputs["fragment"].spirv.startswith(b"#include <metal_stdlib>")


def test_a_target_without_a_finish_or_a_failed_output_passes_through() -> None:
    request = pair("portable", "vulkan1.2", **GL_ERA)["vertex"]
    output = CompileOutput(b"\x03\x02\x23\x07")
    assert targets.finish_output(output, request, SourceTree(MATERIALS)) is output
    failed = CompileOutput(None)
    assert targets.finish_output(failed, pair("portable", "metal")["vertex"], SourceTree(MATERIALS)) is failed


def test_a_module_spirv_cross_refuses_fails_the_metal_job_located_at_its_file() -> None:
    request = pair("portable", "metal", **GL_ERA)["vertex"]
    output = targets.finish_output(CompileOutput(b"\x03\x02\x23\x07" + b"\0" * 16), request, SourceTree(MATERIALS))
    (error,) = output.errors
    assert output.spirv is None and error.message.startswith("metal: SPIRV-Cross cannot write MSL")
    assert error.location.file == str(MATERIALS / "portable" / "portable.vert")


@needs_wgpu
@needs_naga
def test_what_webgpu_cannot_express_fails_the_webgpu_job_only() -> None:
    webgpu = compile_pair("portable", "webgpu", TEXTURED, **GL_ERA)
    vulkan = compile_pair("portable", "vulkan1.2", TEXTURED, **GL_ERA)
    assert webgpu["vertex"].ok and all(o.ok for o in vulkan.values())
    (error,) = webgpu["fragment"].errors
    assert error.message.startswith("webgpu: naga cannot translate the SPIR-V to WGSL: parse: InvalidId(")
    assert "combined image samplers" in error.message and error.location.file.endswith("portable/portable.frag")
    plain = compile_pair("portable", "webgpu", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA)
    assert all(o.ok for o in plain.values())
    assert plain["fragment"].spirv.decode().endswith("return _e5;\n}\n") and b"@fragment" in plain["fragment"].spirv


@needs_naga
def test_a_webgpu_job_s_wgsl_that_wgpu_refuses_fails_that_job(monkeypatch) -> None:
    from pipeline.compilers import naga

    def refuse(text: str, label: str = "") -> None:
        assert text.startswith("struct ") and "fn main(" in text  # the WGSL is what wgpu's naga is given
        if label.endswith(":fragment"):
            raise naga.NagaError("Shader validation error: refused")

    monkeypatch.setattr(naga, "check", refuse)
    outputs = compile_pair("portable", "webgpu", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA)
    (error,) = outputs["fragment"].errors
    assert error.message == "webgpu: naga refuses the WGSL: Shader validation error: refused"
    assert outputs["vertex"].ok and outputs["fragment"].spirv is None


@needs_naga
def test_a_webgpu_finisher_names_the_translator_and_the_validator() -> None:
    identity = targets.finisher_identity("webgpu")
    assert identity.startswith("naga-wasm 30.1.0 (naga 30.0.1); driver sha256:") and "; wgpu " in identity
