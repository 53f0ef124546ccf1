"""The webgpu target's check (compilers/naga.py): naga, through wgpu, accepts the SPIR-V WebGPU can express
and refuses the rest with its own words, one line."""

from __future__ import annotations

import pytest
from runtime_helpers import needs_wgpu
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


@needs_wgpu
def test_naga_accepts_what_webgpu_expresses_and_refuses_the_rest() -> None:
    plain = compile_pair("portable", "vulkan1.2", (("TEXTURED", "0"), ("VERTEX_COLOR", "1")), **GL_ERA)
    for output in plain.values():
        naga.check(output.spirv)
    textured = compile_pair("portable", "vulkan1.2", (("TEXTURED", "1"), ("VERTEX_COLOR", "0")), **GL_ERA)
    with pytest.raises(naga.NagaError, match="no combined image samplers"):
        naga.check(textured["fragment"].spirv)


@needs_wgpu
def test_a_matrix_varying_is_refused_for_webgpu() -> None:
    from pipeline.compilers.backends import compile_one, get_backend
    from pipeline.compilers.sources import SourceTree
    from paths import TESTS

    request = CompileRequest("glpair/pair.vert", "vertex", defines=(("TEXTURED", "0"), ("VERTEX_COLOR", "0")),
                             target="vulkan1.2", **GL_ERA)
    output = compile_one(request, SourceTree(TESTS / "data" / "glpair" / "materials"), get_backend("capi"))
    with pytest.raises(naga.NagaError, match="Only numeric scalars and vectors"):
        naga.check(output.spirv)


@needs_wgpu
def test_the_identity_names_wgpu_and_its_native_build() -> None:
    assert naga.identity().startswith("wgpu ") and "wgpu-native " in naga.identity()


@needs_wgpu
def test_a_forked_process_makes_its_own_device(monkeypatch) -> None:
    first = naga.device()
    assert naga.device() is first
    monkeypatch.setattr(naga.os, "getpid", lambda: -1)  # as a forked compile worker sees itself
    assert naga.device() is not first
