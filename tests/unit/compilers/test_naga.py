"""The webgpu target's check (compilers/naga.py): naga, through wgpu, accepts the WGSL WebGPU can express
and refuses the rest with its own words, one line; the hints for what GLSL and HLSL authors meet most."""

from __future__ import annotations

import pytest
from runtime_helpers import needs_naga, needs_wgpu
from target_helpers import GL_ERA, compile_pair

from pipeline.compilers import naga
from pipeline.compilers.request import CompileRequest

NAGA_MESSAGE = """Validation Error

Caused by:
  In wgpuDeviceCreateShaderModule, label = 'x'

Shader validation error: Entry point main at Vertex is invalid
  ┌─ :1:1
  │
1 │
  │   naga::ir::Type [15]
  │
  = The type [10] cannot be used for user-defined entry point inputs or outputs.


      The type [10] cannot be used for user-defined entry point inputs or outputs.
"""


def test_summary_keeps_naga_s_words_once_in_one_line_without_source_frames() -> None:
    assert naga.summary(NAGA_MESSAGE) == ("Shader validation error: Entry point main at Vertex is invalid; "
                                          "The type [10] cannot be used for user-defined "
                                          "entry point inputs or outputs.")


def test_a_combined_image_sampler_is_found_in_the_module() -> None:
    textured = compile_pair("portable", "vulkan1.2", (("TEXTURED", "1"), ("VERTEX_COLOR", "0")), **GL_ERA)
    plain = compile_pair("portable", "vulkan1.2", (("TEXTURED", "0"), ("VERTEX_COLOR", "0")), **GL_ERA)
    assert naga.declares_combined_sampler(textured["fragment"].spirv)
    assert not naga.declares_combined_sampler(plain["fragment"].spirv)
    from pipeline.compilers.backends import compile_one, get_backend
    from pipeline.compilers.sources import SourceTree
    from paths import TESTS

    hlsl = CompileRequest("studio/studio.hlsl", "fragment", language="hlsl", entry="PSMain",
                          defines=(("TEXTURED", "1"), ("ALPHA_MODE", "0"), ("ALPHA_MODE_MASK", "1")))
    separate = compile_one(hlsl, SourceTree(TESTS / "data" / "hlsl"), get_backend("capi"))
    assert separate.ok and not naga.declares_combined_sampler(separate.spirv)  # Texture2D + SamplerState


def test_the_hints_name_what_to_write_instead() -> None:
    textured = compile_pair("portable", "vulkan1.2", (("TEXTURED", "1"), ("VERTEX_COLOR", "0")), **GL_ERA)
    plain = compile_pair("portable", "vulkan1.2", (("TEXTURED", "0"), ("VERTEX_COLOR", "0")), **GL_ERA)
    assert naga.hint("parse: InvalidId(27)", textured["fragment"].spirv) == f" ({naga.COMBINED})"
    aligned = naga.hint("Alignment requirements for address space Uniform are not met by [4]", plain["fragment"].spirv)
    assert aligned == f" ({naga.UNIFORM_ALIGNMENT})" and naga.hint("anything else", plain["fragment"].spirv) == ""


@needs_wgpu
@needs_naga
def test_naga_accepts_the_wgsl_webgpu_expresses_and_refuses_the_rest() -> None:
    from pipeline.compilers.wgsl import to_wgsl

    plain = compile_pair("portable", "vulkan1.2", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA)
    for output in plain.values():
        naga.check(to_wgsl(output.spirv))
    strided = ("@group(0) @binding(0) var<uniform> u: array<f32, 4>;\n"
               "@fragment fn main() -> @location(0) vec4<f32> { return vec4<f32>(u[0]); }\n")
    with pytest.raises(naga.NagaError, match="The array stride 4 is not a multiple of the required alignment 16"):
        naga.check(strided)


@needs_wgpu
def test_the_identity_names_wgpu_and_its_native_build() -> None:
    assert naga.identity().startswith("wgpu ") and "wgpu-native " in naga.identity()


@needs_wgpu
def test_a_forked_process_makes_its_own_device(monkeypatch) -> None:
    first = naga.device()
    assert naga.device() is first
    monkeypatch.setattr(naga.os, "getpid", lambda: -1)  # as a forked compile worker sees itself
    assert naga.device() is not first
