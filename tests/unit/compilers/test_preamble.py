"""Defines as a glslang preamble and glslang's info log as located diagnostics (compilers/preamble.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers.preamble import (
    INCLUDE_EXTENSION,
    clean_preprocessed,
    compile_output,
    default_version,
    define_lines,
    enable_includes,
    normalize_name,
    parse_log,
    prepare_source,
    request_defines,
)
from pipeline.compilers.request import CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.errors import Location

BODY = "layout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n"


def _numbered(text: str) -> dict[str, int]:
    """Each line of ``text`` with the number a preprocessor gives it, honouring ``#line N``."""
    numbers, current = {}, 1
    for line in text.split("\n"):
        if line.startswith("#line "):
            current = int(line.split()[1])
            continue
        numbers.setdefault(line, current)
        current += 1
    return numbers


def test_defines_become_one_define_line_each_in_request_order() -> None:
    assert define_lines((("B", "2"), ("A", "(X + 1)"))) == "#define B 2\n#define A (X + 1)\n"
    assert define_lines(()) == ""


def test_the_include_extension_follows_version_and_every_original_line_keeps_its_number() -> None:
    text = "// header comment\n\n#version 450\n" + BODY
    enabled = enable_includes(text)
    assert enabled.split("\n")[3] == INCLUDE_EXTENSION.rstrip("\n")  # right after the #version line
    original, kept = _numbered(text), _numbered(enabled)
    assert all(kept[line] == number for line, number in original.items() if line)
    assert enable_includes(BODY) == BODY  # no #version: nothing to insert after


@pytest.mark.parametrize("target, version, expected", [
    ("vulkan1.2", None, (100, None)), ("opengl4.5", None, (450, None)), ("webgl2", None, (300, "es")),
    ("es3.0", None, (300, "es")), ("vulkan1.2", "310 es", (310, "es")), ("webgl2", "310 es", (310, "es")),
])
def test_the_default_version_comes_from_the_request_else_the_target(target, version, expected) -> None:
    request = CompileRequest("a.frag", "fragment", target=target, version=version)
    assert default_version(request, False) == default_version(request, True) == expected


def test_a_source_without_version_gets_the_one_its_target_names_and_keeps_its_line_numbers() -> None:
    prepared = prepare_source(CompileRequest("a.frag", "fragment", target="webgl2"), BODY)
    assert prepared.startswith("#version 300 es\n" + INCLUDE_EXTENSION)
    assert all(_numbered(prepared)[line] == number for line, number in _numbered(BODY).items() if line)
    request = CompileRequest("a.frag", "fragment", version="450")
    assert prepare_source(request, BODY).startswith("#version 450\n")


def test_a_vulkan_source_without_version_and_hlsl_are_left_as_written() -> None:
    assert prepare_source(CompileRequest("a.frag", "fragment"), BODY) == BODY
    hlsl = "#version 450\nfloat4 main() : SV_Target { return 1; }\n"  # no include extension in HLSL
    assert prepare_source(CompileRequest("a.hlsl", "fragment", language="hlsl"), hlsl) == hlsl
    versioned = "#version 310 es\n" + BODY
    assert prepare_source(CompileRequest("a.frag", "fragment", target="webgl2"), versioned) == \
        enable_includes(versioned)  # the source's own ES #version wins
    desktop = "#version 450\n" + BODY
    for target in ("vulkan1.2", "opengl4.5", "metal", "webgpu"):
        assert prepare_source(CompileRequest("a.frag", "fragment", target=target), desktop) == enable_includes(desktop)


@pytest.mark.parametrize("target, version, expected", [
    ("webgl2", None, "#version 300 es"), ("es3.0", None, "#version 300 es"), ("webgl2", "310 es", "#version 310 es"),
])
def test_an_es_target_compiles_a_desktop_versioned_source_as_glsl_es_on_the_same_line(target, version, expected):
    source = "// shared by every target\n#version 450\n" + BODY
    prepared = prepare_source(CompileRequest("a.frag", "fragment", target=target, version=version), source)
    assert prepared == enable_includes(f"// shared by every target\n{expected}\n" + BODY)
    assert all(_numbered(prepared)[line] == number for line, number in _numbered(source).items()
               if line and not line.startswith("#version"))


def test_the_webgpu_target_defines_its_macro_before_the_request_s_defines_and_no_other_target_does() -> None:
    defines = (("PASS_FORWARD", "1"),)
    webgpu = CompileRequest("a.frag", "fragment", target="webgpu", defines=defines)
    assert request_defines(webgpu) == (("PIPELINE_TARGET_WEBGPU", "1"), ("PASS_FORWARD", "1"))
    for target in ("vulkan1.0", "vulkan1.2", "vulkan1.3", "opengl4.5", "webgl2", "es3.0", "metal"):
        assert request_defines(CompileRequest("a.frag", "fragment", target=target, defines=defines)) == defines
    plugin = CompileRequest("a.frag", "fragment", target="webgpu", defines=defines, backend="studio:dxc")
    assert request_defines(plugin) == defines  # a compile backend plug-in gets the request's defines only


def test_preprocessed_text_is_cleaned_for_a_gles_runtime() -> None:
    raw = ('#version 300 es\n#extension GL_GOOGLE_include_directive : enable\n#line 2 "a.frag"\n'
           "#extension GL_EXT_shader_texture_lod : enable   \n\nprecision mediump float;  \n\n"
           '#extension GL_GOOGLE_cpp_style_line_directive : require\nvoid main() {}\n')
    assert clean_preprocessed(raw, "310 es") == ("#version 300 es\n#extension GL_EXT_shader_texture_lod : enable\n"
                                                 "precision mediump float;\nvoid main() {}\n")
    assert clean_preprocessed("#line 1\nvoid main() {}", "300 es") == "#version 300 es\nvoid main() {}\n"


@pytest.mark.parametrize("name, expected", [
    (None, "top.frag"), ("0", "top.frag"), ("1", "top.frag"), ("inc/a.glsl", "inc/a.glsl"),
    ("inc\\a.glsl", "inc/a.glsl"), ("inc/../lib/b.glsl", "lib/b.glsl"), ("/root/lib/b.glsl", "lib/b.glsl"),
    ("/elsewhere/b.glsl", "/elsewhere/b.glsl"), ("/rootlike/b.glsl", "/rootlike/b.glsl"),
])
def test_reported_names_map_to_root_relative_paths(name, expected) -> None:
    assert normalize_name(name, "top.frag", "/root/") == expected


def test_a_log_becomes_located_errors_and_warnings_without_noise_or_repeats() -> None:
    log = ("WARNING: 0:3: 'x' : unused variable\n"
           "ERROR: inc/a.glsl:5: 'foo' : undeclared identifier\n"
           "ERROR: inc/a.glsl:5: 'foo' : undeclared identifier\n"
           "ERROR: 0:7:12: '' :  syntax error, unexpected RIGHT_BRACE\n"
           "ERROR: 2 compilation errors.  No code generated.\n"
           "ERROR: Linking fragment stage: Missing entry point: Each stage requires one entry point\n"
           "some other line\n")
    found = parse_log(log, lambda n: normalize_name(n, "top.frag", "/root/"), lambda rel: "/root/" + rel)
    assert [(d.severity, d.location, d.message) for d in found] == [
        ("warning", Location("/root/top.frag", 3), "'x' : unused variable"),
        ("error", Location("/root/inc/a.glsl", 5), "'foo' : undeclared identifier"),
        ("error", Location("/root/top.frag", 7, 12), "syntax error: unexpected '}'"),
        ("error", Location("/root/top.frag"), "Linking fragment stage: Missing entry point: Each stage requires "
                                              "one entry point"),
    ]


@pytest.fixture
def tree(tmp_path: Path) -> SourceTree:
    return SourceTree(tmp_path)


def test_a_missing_entry_point_warning_is_an_error_and_drops_the_blob(tree: SourceTree) -> None:
    request = CompileRequest("a.frag", "fragment")
    output = compile_output(b"\x03\x02\x23\x07", "WARNING: 0:1: Entry point not found\n", request, tree)
    assert output.spirv is None
    assert [str(d) for d in output.errors] == [f"{tree.name('a.frag')}:1: error: Entry point not found"]
    kept = compile_output(b"blob", "WARNING: 0:2: 'x' : unused\n", request, tree)
    assert kept.spirv == b"blob" and kept.errors == () and kept.diagnostics[0].severity == "warning"


def test_an_error_in_the_log_drops_a_blob_the_compiler_still_gave(tree: SourceTree) -> None:
    output = compile_output(b"blob", "ERROR: inc/x.glsl:2: 'y' : undeclared identifier\n",
                            CompileRequest("a.frag", "fragment"), tree)
    assert output.spirv is None and output.errors[0].location == Location(tree.name("inc/x.glsl"), 2)


@pytest.mark.parametrize("log, message", [
    ("", "compilation failed without a message"),
    ("glslang crashed\nSegmentation fault (core dumped)\n", "Segmentation fault (core dumped)"),
])
def test_a_failure_without_a_located_error_still_gets_one_at_the_source(tree: SourceTree, log, message) -> None:
    output = compile_output(None, log, CompileRequest("sub/a.frag", "fragment"), tree)
    assert [(d.location, d.message) for d in output.errors] == [(Location(tree.name("sub/a.frag")), message)]
