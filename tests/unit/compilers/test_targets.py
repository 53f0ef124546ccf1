"""The finishing step of metal and webgpu jobs (compilers/targets.py), through the one compile entry point:
what a target cannot express fails that target's job alone, located at the stage's file."""

from __future__ import annotations

from runtime_helpers import needs_wgpu
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
def test_what_webgpu_cannot_express_fails_the_webgpu_job_only() -> None:
    webgpu = compile_pair("portable", "webgpu", TEXTURED, **GL_ERA)
    vulkan = compile_pair("portable", "vulkan1.2", TEXTURED, **GL_ERA)
    assert webgpu["vertex"].ok and all(o.ok for o in vulkan.values())
    (error,) = webgpu["fragment"].errors
    assert error.message.startswith("webgpu: naga refuses the SPIR-V:") and "combined image samplers" in error.message
    assert error.location.file.endswith("portable/portable.frag")
    plain = compile_pair("portable", "webgpu", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA)
    assert all(o.ok and o.spirv[:4] == b"\x03\x02\x23\x07" for o in plain.values())  # the SPIR-V naga accepted
