"""Both compiler backends against the real glslang, plus SPIRV-Tools validation and optimization.

"Same semantics" between the backends means: the disassembly (spirv-dis) is
equal once the lines that only describe the source are dropped (OpSource*,
OpName/OpMemberName, OpLine/OpNoLine, OpString, OpModuleProcessed).  Today the
two backends even produce byte-identical GLSL output; the test does not depend
on that.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import re

import pytest

from pipeline.compilers import (
    CompileRequest,
    SourceTree,
    compile_batch,
    compile_one,
    disassemble,
    get_backend,
    optimize,
    select_backend,
    validate,
)
from pipeline.keys.defines import project_defines
from paths import TESTS

DATA = TESTS / "data"
GLSL = (DATA / "glsl").resolve().as_posix() + "/"  # diagnostics name files by their absolute paths
HLSL = (DATA / "hlsl").resolve().as_posix() + "/"
ALPHA = (("ALPHA_MODE_OPAQUE", "0"), ("ALPHA_MODE_MASK", "1"), ("ALPHA_MODE_BLEND", "2"))
FRAGMENT = CompileRequest("mesh/mesh.frag", "fragment", defines=ALPHA + (
    ("ALPHA_MODE", "1"), ("UV_SETS", "1"), ("NORMAL_MAP", "1"), ("BASE_COLOR_MAP", "1"), ("CLEARCOAT", "1")))
VERTEX = CompileRequest("mesh/mesh.vert", "vertex", defines=(("UV_SETS", "1"), ("SKINNING", "1")))
DEBUG_LINE = re.compile(r"^\s*(%\S+ = )?Op(Source\w*|Name|MemberName|Line|NoLine|String|ModuleProcessed)\b")
BACKENDS = ["capi", "cli"]


def semantics(spirv: bytes) -> list[str]:
    return [line for line in disassemble(spirv).splitlines() if not DEBUG_LINE.match(line)]


@pytest.fixture(scope="module")
def glsl() -> SourceTree:
    return SourceTree(DATA / "glsl")


@pytest.fixture(scope="module")
def hlsl() -> SourceTree:
    return SourceTree(DATA / "hlsl")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("request_", [FRAGMENT, VERTEX], ids=["fragment", "vertex"])
def test_glsl_with_includes_compiles_to_valid_spirv(glsl, backend, request_):
    output = compile_one(request_, glsl, get_backend(backend))
    assert output.ok, output.diagnostics
    assert output.spirv[:4] == b"\x03\x02\x23\x07"                     # SPIR-V magic, little endian
    assert output.spirv[4:8] == bytes([0, 5, 1, 0])                     # version 1.5 for vulkan1.2
    assert validate(output.spirv, "vulkan1.2") == []


@pytest.mark.parametrize("request_", [FRAGMENT, VERTEX], ids=["fragment", "vertex"])
def test_backends_agree_on_semantics(glsl, request_):
    capi = compile_one(request_, glsl, get_backend("capi")).spirv
    cli = compile_one(request_, glsl, get_backend("cli")).spirv
    assert semantics(capi) == semantics(cli)


def test_projected_defines_give_the_same_spirv(glsl):
    tested = glsl.tested_macros(VERTEX.source)
    full = CompileRequest(VERTEX.source, "vertex", defines=FRAGMENT.defines + (("SKINNING", "1"),))
    projected = CompileRequest(VERTEX.source, "vertex", defines=project_defines(full.defines, tested))
    backend = get_backend("capi")
    assert projected.defines == VERTEX.defines
    assert compile_one(full, glsl, backend).spirv == compile_one(projected, glsl, backend).spirv


def test_defines_change_the_code(glsl):
    plain = CompileRequest("mesh/mesh.frag", "fragment", defines=ALPHA + (("ALPHA_MODE", "0"),))
    backend = get_backend("capi")
    assert semantics(compile_one(plain, glsl, backend).spirv) != semantics(compile_one(FRAGMENT, glsl, backend).spirv)


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_in_included_file_names_its_original_line(glsl, backend):
    output = compile_one(CompileRequest("broken/uses_bad.frag", "fragment"), glsl, get_backend(backend))
    assert output.spirv is None
    assert str(output.errors[0]) == f"{GLSL}broken/bad.glsl:5: error: 'undeclaredThing' : undeclared identifier"


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_in_top_file_keeps_line_numbers_despite_defines(glsl, backend):
    request = CompileRequest("broken/top_error.frag", "fragment", defines=(("BROKEN", "1"), ("OTHER", "2")))
    output = compile_one(request, glsl, get_backend(backend))
    assert str(output.errors[0]) == f"{GLSL}broken/top_error.frag:6: error: 'notDefinedHere' : undeclared identifier"


@pytest.mark.parametrize("backend", BACKENDS)
def test_missing_include_is_located(glsl, backend):
    output = compile_one(CompileRequest("broken/missing.frag", "fragment"), glsl, get_backend(backend))
    assert output.spirv is None
    error = output.errors[0]
    assert (error.location.file, error.location.line) == (GLSL + "broken/missing.frag", 3)
    assert "does_not_exist.glsl" in error.message


def test_named_root_names_files_under_another_folder(glsl):
    tree = SourceTree(DATA / "glsl", named_root="/game/shaders/")  # a tree rebuilt away from its library
    output = compile_one(CompileRequest("broken/uses_bad.frag", "fragment"), tree, get_backend("capi"))
    assert output.errors[0].location.file == "/game/shaders/broken/bad.glsl"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stage,entry,defines", [
    ("vertex", "VSMain", (("TEXTURED", "1"), ("VERTEX_COLOR", "1"))),
    ("fragment", "PSMain", (("TEXTURED", "1"),)),
    ("fragment", "PSMain", ()),
])
def test_hlsl_family_compiles_with_its_entry_point(hlsl, backend, stage, entry, defines):
    request = CompileRequest("simple/simple.hlsl", stage, "hlsl", entry, defines)
    output = compile_one(request, hlsl, get_backend(backend))
    assert output.ok, output.diagnostics
    assert validate(output.spirv) == []
    model = "Vertex" if stage == "vertex" else "Fragment"
    assert re.search(rf'OpEntryPoint {model} %\w+ "{entry}"', disassemble(output.spirv))


def test_hlsl_backends_agree(hlsl):
    request = CompileRequest("simple/simple.hlsl", "fragment", "hlsl", "PSMain", (("TEXTURED", "1"),))
    outputs = [compile_one(request, hlsl, get_backend(name)).spirv for name in BACKENDS]
    assert semantics(outputs[0]) == semantics(outputs[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_hlsl_errors_are_located_and_missing_entry_is_an_error(hlsl, backend):
    broken = compile_one(CompileRequest("simple/broken.hlsl", "fragment", "hlsl", "PSMain"), hlsl,
                         get_backend(backend))
    assert str(broken.errors[0]).startswith(f"{HLSL}simple/broken.hlsl:5: error: 'missingValue'")
    no_entry = compile_one(CompileRequest("simple/simple.hlsl", "fragment", "hlsl", "Nope"), hlsl,
                           get_backend(backend))
    assert no_entry.spirv is None and "Entry point not found" in no_entry.errors[0].message


def test_validate_reports_a_broken_blob(glsl):
    spirv = compile_one(FRAGMENT, glsl, get_backend("capi")).spirv
    assert validate(spirv[:-8])  # truncated: the validator must complain
    assert validate(b"\x00" * 20)


def test_optimize_gives_smaller_valid_spirv(glsl):
    spirv = compile_one(FRAGMENT, glsl, get_backend("capi")).spirv
    optimized = optimize(spirv, "vulkan1.2")
    assert validate(optimized) == [] and len(optimized) < len(spirv)


def test_identities_name_compiler_and_spirv_tools():
    for name in BACKENDS:
        identity = get_backend(name).identity
        assert "13." in identity and "SPIRV-Tools" in identity
    assert get_backend("capi").identity != get_backend("cli").identity
    backend, reason = select_backend()
    assert backend.name == "capi" and reason is None


def test_compile_batch_optimizes_and_reports_errors_without_raising():
    requests = [FRAGMENT, CompileRequest("broken/uses_bad.frag", "fragment"),
                CompileRequest(VERTEX.source, "vertex", defines=VERTEX.defines, optimize=True)]
    outputs = compile_batch(requests, DATA / "glsl", "capi")
    assert [o.ok for o in outputs] == [True, False, True]
    assert outputs[1].errors[0].location.file == GLSL + "broken/bad.glsl"


def test_compile_batch_in_a_process_pool():
    requests = [FRAGMENT, VERTEX, CompileRequest("broken/missing.frag", "fragment")]
    spawn = multiprocessing.get_context("spawn")  # nothing inherited: the call itself must pickle
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        futures = [pool.submit(compile_batch, [r], DATA / "glsl", "capi") for r in requests]
        outputs = [f.result()[0] for f in futures]
    local = compile_batch(requests[:2], DATA / "glsl", "capi")
    assert [o.spirv for o in outputs[:2]] == [o.spirv for o in local]
    assert outputs[2].errors[0].location.line == 3
