"""What a compile is asked to do and what it gives back (compilers/request.py): targets, versions, requests."""

from __future__ import annotations


import pytest

from pipeline.compilers.request import (
    STAGES,
    TARGETS,
    CompileOutput,
    CompileRequest,
    RequestError,
    parse_version,
    target_info,
)
from pipeline.errors import Diagnostic, Location
from pipeline.structs import replace

VULKAN_SPIRV = {"vulkan1.0": (1, 0), "vulkan1.1": (1, 3), "vulkan1.2": (1, 5), "vulkan1.3": (1, 6)}


@pytest.mark.parametrize("text, parsed", [("300 es", (300, "es")), ("450", (450, None)),
                                          ("450 core", (450, "core")), ("150 compatibility", (150, "compatibility"))])
def test_a_version_is_a_number_and_an_optional_profile(text, parsed) -> None:
    assert parse_version(text) == parsed


@pytest.mark.parametrize("text", ["", "45", "0450", "300 ES", "300es", "450 core ", "es 300", "4500"])
def test_a_bad_version_is_refused_naming_what_was_given(text) -> None:
    with pytest.raises(RequestError) as caught:
        parse_version(text)
    assert f"bad GLSL version {text!r}" in str(caught.value)


def test_vulkan_targets_pair_with_their_spirv_version_and_glslang_codes() -> None:
    for name, spirv in VULKAN_SPIRV.items():
        target = target_info(name)
        minor = int(name.removeprefix("vulkan1."))
        assert (target.name, target.spirv, target.client, target.is_spirv) == (name, spirv, "vulkan", True)
        # glslang_target_client_version_t: 1 << 22 | minor << 12; glslang_target_language_version_t: 1 << 16 | m << 8
        assert target.client_version == (1 << 22) | (minor << 12)
        assert target.spirv_version == (spirv[0] << 16) | (spirv[1] << 8)


def test_opengl_gives_spirv_1_0_and_the_text_targets_give_no_spirv() -> None:
    opengl = target_info("opengl4.5")
    assert (opengl.spirv, opengl.client, opengl.client_version) == ((1, 0), "opengl", 450)
    assert opengl.default_version == "450"
    for name in ("webgl2", "es3.0"):  # es3.0 is an alias: the same target under another name
        target = target_info(name)
        assert not target.is_spirv and target.client == "none"
        assert parse_version(target.default_version) == (300, "es")
        assert replace(target, name="webgl2") == TARGETS["webgl2"]


def test_an_unknown_target_names_the_known_ones() -> None:
    with pytest.raises(RequestError) as caught:
        target_info("vulkan2.0")
    message = str(caught.value)
    assert message.startswith("unknown target 'vulkan2.0'")
    assert all(name in message for name in TARGETS)


@pytest.mark.parametrize("fields, wrong", [
    ({"stage": "geometry"}, "unknown stage 'geometry'"),
    ({"language": "wgsl"}, "unknown language 'wgsl'"),
    ({"target": "d3d12"}, "unknown target 'd3d12'"),
    ({"version": "3.0"}, "bad GLSL version '3.0'"),
])
def test_a_request_refuses_what_no_compiler_can_do(fields, wrong) -> None:
    arguments = {"source": "a.frag", "stage": "fragment", **fields}
    with pytest.raises(RequestError, match=wrong):
        CompileRequest(**arguments)
    assert issubclass(RequestError, ValueError)  # a caller's bug, not a located user error


def test_a_request_defaults_to_glsl_main_on_vulkan1_2_and_is_a_value() -> None:
    request = CompileRequest("pbr/pbr.frag", "fragment", defines=(("A", "1"),))
    assert (request.language, request.entry, request.target, request.version) == ("glsl", "main", "vulkan1.2", None)
    assert not (request.optimize or request.relaxed or request.auto_map)
    same = CompileRequest("pbr/pbr.frag", "fragment", defines=(("A", "1"),))
    assert request == same and len({request, same}) == 1  # usable as a key
    assert request != replace(request, defines=(("A", "2"),))
    with pytest.raises(AttributeError):
        request.stage = "vertex"  # type: ignore[misc]
    assert set(STAGES) == {"vertex", "fragment", "compute"}


def test_an_output_is_ok_when_it_has_a_blob_and_lists_its_errors_apart_from_warnings() -> None:
    warning = Diagnostic(Location("a.frag", 3), "unused", "warning")
    error = Diagnostic(Location("a.frag", 4), "undeclared identifier")
    assert CompileOutput(b"\x03\x02\x23\x07", (warning,)).ok
    assert CompileOutput(b"\x03\x02\x23\x07", (warning,)).errors == ()
    failed = CompileOutput(None, (warning, error))
    assert not failed.ok and failed.errors == (error,)
    assert CompileOutput(b"", ()).ok  # an empty text blob is still a blob


def test_the_compile_time_is_not_part_of_an_outputs_value() -> None:
    blob = b"#version 300 es\n"
    assert CompileOutput(blob, (), seconds=0.5) == CompileOutput(blob, (), seconds=2.0)
    assert CompileOutput(blob, ()) != CompileOutput(None, ())


def test_binding_shifts_give_hlsl_register_classes_their_ranges_over_the_stage_base() -> None:
    from pipeline.compilers.request import DEFAULT_REGISTERS, binding_shifts

    hlsl = CompileRequest("s.hlsl", "fragment", language="hlsl")
    assert dict(DEFAULT_REGISTERS) == {"b": 0, "t": 32, "s": 64, "u": 96}
    assert binding_shifts(hlsl) == {0: 64, 1: 32, 2: 96, 4: 32, 5: 96}  # sampler, texture, image, SSBO, UAV; UBO +0
    assert binding_shifts(replace(hlsl, auto_map=True)) == {0: 80, 1: 48, 2: 112, 3: 16, 4: 48, 5: 112}
    assert binding_shifts(replace(hlsl, registers=(("t", 4),))) == {1: 4, 4: 4}
    glsl = CompileRequest("a.frag", "fragment")
    assert binding_shifts(glsl) == {} and binding_shifts(replace(glsl, target="webgl2")) == {}
    assert binding_shifts(replace(glsl, auto_map=True)) == {r: 16 for r in range(6)}
    with pytest.raises(RequestError, match="unknown register class 'x'"):
        CompileRequest("s.hlsl", "fragment", language="hlsl", registers=(("x", 1),))


def test_metal_and_webgpu_compile_vulkan_1_2_spirv_and_finish_it_for_their_platform() -> None:
    from pipeline.compilers.request import TARGETS

    for name, finish, blob in (("metal", "msl", "msl"), ("webgpu", "naga", "wgsl")):
        target = TARGETS[name]
        assert (target.name, target.spirv, target.client) == ("vulkan1.2", (1, 5), "vulkan")  # spirv-val's env
        assert (target.finish, target.blob, target.is_spirv) == (finish, blob, True)
    assert (TARGETS["webgl2"].blob, TARGETS["vulkan1.2"].blob, TARGETS["vulkan1.2"].finish) == ("glsl", "spirv", None)


@pytest.mark.parametrize("version", ["2", "2.10", "4.0", "x"])
def test_a_request_refuses_an_msl_version_spirv_cross_cannot_take(version: str) -> None:
    with pytest.raises(RequestError, match="bad MSL version"):
        CompileRequest("a.frag", "fragment", target="metal", msl_version=version)
