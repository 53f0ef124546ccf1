"""glslangValidator in a subprocess (compilers/glslang_cli.py): it compiles in scratch folders (a mirror
of the library, or a generated stage's text), but its diagnostics name the library's own files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, GlslangCliBackend, SourceTree, compile_one, get_backend


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
