"""Backend selection and compiling one request or a batch (compilers/backends.py): what a pool worker returns
does not depend on the folder it runs in; diagnostics name the library's files by their absolute paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers.backends import (
    BackendError,
    compile_batch,
    compile_one,
    default_backend,
    get_backend,
    select_backend,
)
from pipeline.compilers.request import CompileOutput, CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import optimize, validate
from pipeline.errors import Diagnostic, Location

GOOD = "#version 450\nlayout(location = 0) out vec4 colour;\nvoid main() { colour = vec4(1.0); }\n"
BAD = '#version 450\n#include "inc/bad.glsl"\nlayout(location = 0) out vec4 colour;\nvoid main() { colour = f(); }\n'
REQUESTS = [CompileRequest("good.frag", "fragment"), CompileRequest("bad.frag", "fragment"),
            CompileRequest("lost.frag", "fragment")]


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    (tmp_path / "lib" / "inc").mkdir(parents=True)
    (tmp_path / "lib" / "good.frag").write_text(GOOD)
    (tmp_path / "lib" / "bad.frag").write_text(BAD)
    (tmp_path / "lib" / "inc" / "bad.glsl").write_text("vec4 f() { return undefined_thing; }\n")
    (tmp_path / "lib" / "lost.frag").write_text('#version 450\n#include "nowhere.glsl"\nvoid main() {}\n')
    return tmp_path / "lib"


@pytest.mark.parametrize("backend", ["capi", "cli"])
def test_a_batch_gives_the_same_outputs_from_any_working_folder(lib: Path, monkeypatch, backend: str) -> None:
    monkeypatch.chdir(lib.parent)
    beside = compile_batch(REQUESTS, Path("lib"), backend)
    monkeypatch.chdir(lib / "inc")
    inside = compile_batch(REQUESTS, Path(".."), backend)
    assert [(o.spirv, o.diagnostics) for o in beside] == [(o.spirv, o.diagnostics) for o in inside]
    good, bad, lost = beside
    assert good.ok and not bad.ok and not lost.ok
    at = f"{lib.resolve()}/"
    assert (bad.errors[0].file, bad.errors[0].line) == (at + "inc/bad.glsl", 1)
    assert "undefined_thing" in bad.errors[0].message
    assert [str(d) for d in lost.errors] == [f"{at}lost.frag:2: error: cannot find include file 'nowhere.glsl'"]


class Counting:
    """The real C API backend, counting its compiles; ``damage`` stands for a compiler that emits a bad blob."""

    name, identity = "counting", "counting"

    def __init__(self, damage=None):
        self.real, self.damage, self.calls = get_backend("capi"), damage, []

    def compile(self, request: CompileRequest, tree: SourceTree) -> CompileOutput:
        self.calls.append(request.source)
        output = self.real.compile(request, tree)
        return CompileOutput(self.damage(output.spirv), output.diagnostics) if self.damage else output


def test_backends_are_chosen_by_name_once_per_process() -> None:
    assert get_backend("capi") is get_backend("capi") and get_backend("capi").name == "capi"
    assert get_backend("auto") is default_backend() is select_backend()[0]
    assert select_backend()[1] is None  # the C API loads here, so no reason to fall back is given
    with pytest.raises(BackendError) as caught:
        get_backend("gpu")
    assert str(caught.value) == "pipeline: error: unknown compiler backend 'gpu' (known: auto, capi, cli)"


def test_generation_problems_and_missing_includes_fail_a_job_without_compiling(lib: Path) -> None:
    tree, backend = SourceTree(lib), Counting()
    problem = Diagnostic(Location(str(lib / "gen.json"), 4), "unknown node type 'mix3'")
    generated = CompileRequest("generated/0.frag", "fragment", text=GOOD, problems=(problem,))
    assert compile_one(generated, tree, backend) == CompileOutput(None, (problem,))
    lost = compile_one(CompileRequest("lost.frag", "fragment"), tree, backend)
    assert not lost.ok and lost.errors[0].location == Location(tree.name("lost.frag"), 2)
    assert backend.calls == []
    assert compile_one(CompileRequest("good.frag", "fragment"), tree, backend).ok and backend.calls == ["good.frag"]


def test_optimize_gives_the_optimized_validated_blob(lib: Path) -> None:
    (lib / "fold.frag").write_text(GOOD.replace("vec4(1.0)", "vec4(k * 0.5)").replace("void", "float k = 2.0;\nvoid"))
    tree = SourceTree(lib)
    plain = compile_one(CompileRequest("fold.frag", "fragment"), tree, get_backend("capi"))
    optimized = compile_one(CompileRequest("fold.frag", "fragment", optimize=True), tree, get_backend("capi"))
    assert optimized.spirv == optimize(plain.spirv) != plain.spirv
    assert validate(optimized.spirv) == []


def test_a_blob_that_fails_spirv_val_is_an_error_at_the_source_not_an_output(lib: Path) -> None:
    tree = SourceTree(lib)
    output = compile_one(CompileRequest("good.frag", "fragment"), tree, Counting(damage=lambda blob: blob[:-4]))
    assert output.spirv is None
    assert [(d.location, d.message.split(":")[0]) for d in output.errors] == [(Location(tree.name("good.frag")),
                                                                               "spirv-val")]


def test_a_text_target_blob_skips_spirv_tools(lib: Path) -> None:
    (lib / "es.frag").write_text("precision mediump float;\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n")
    output = compile_one(CompileRequest("es.frag", "fragment", target="webgl2", optimize=True), SourceTree(lib),
                         get_backend("capi"))
    assert output.ok and output.spirv.startswith(b"#version 300 es\n")


@pytest.mark.parametrize("backend", ["capi", "cli"])
def test_a_webgl2_compile_error_names_its_target_and_a_vulkan_one_does_not(lib: Path, backend: str) -> None:
    (lib / "bound.frag").write_text("#version 450\nlayout(binding = 3) uniform sampler2D t;\n"
                                    "layout(location = 0) out vec4 c;\nvoid main() { c = texture(t, vec2(0.5)); }\n")
    tree = SourceTree(lib)
    web = compile_one(CompileRequest("bound.frag", "fragment", target="webgl2"), tree, get_backend(backend))
    assert not web.ok and web.errors[0].location.line == 2
    assert all(d.message.startswith("webgl2: ") for d in web.diagnostics), web.diagnostics
    assert "'binding'" in web.errors[0].message  # glslang's own words follow the target's name
    vulkan = compile_one(CompileRequest("bad.frag", "fragment"), tree, get_backend(backend))
    assert not vulkan.ok and not any(d.message.startswith("vulkan1.2: ") for d in vulkan.diagnostics)


def test_an_unreadable_include_fails_its_job_not_the_batch(lib: Path) -> None:
    (lib / "inc" / "latin1.glsl").write_bytes(b"// caf\xe9\n")
    (lib / "uses.frag").write_text('#version 450\n#include "inc/latin1.glsl"\nvoid main() {}\n')
    good, uses = compile_batch([CompileRequest("good.frag", "fragment"), CompileRequest("uses.frag", "fragment")],
                               lib, "capi")
    assert good.ok and not uses.ok
    assert uses.errors[0].file == f"{lib.resolve()}/inc/latin1.glsl"
