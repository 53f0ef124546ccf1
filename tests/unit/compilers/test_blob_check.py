"""What a blob from elsewhere must prove before it is used (compilers/blob_check.py), on real glslang blobs."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pipeline.compilers.backends import compile_one, get_backend
from pipeline.compilers.blob_check import EXECUTION_MODELS, SPIRV_MAGIC, blob_problem, entry_points
from pipeline.compilers.request import CompileRequest
from pipeline.compilers.sources import SourceTree
from paths import DATA

SOURCES = {
    "fragment": "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n",
    "vertex": "#version 450\nvoid main() { gl_Position = vec4(0.0); }\n",
    "compute": "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
}
EXTENSIONS = {"fragment": "frag", "vertex": "vert", "compute": "comp"}


@pytest.fixture(scope="module")
def blobs(tmp_path_factory) -> dict[str, tuple[CompileRequest, bytes]]:
    """A vulkan1.2 blob per stage, from the real compiler."""
    root = tmp_path_factory.mktemp("lib")
    tree, backend, made = SourceTree(root), get_backend("capi"), {}
    for stage, text in SOURCES.items():
        (root / f"s.{EXTENSIONS[stage]}").write_text(text)
        request = CompileRequest(f"s.{EXTENSIONS[stage]}", stage)
        output = compile_one(request, tree, backend)
        assert output.ok, output.diagnostics
        made[stage] = (request, output.spirv)
    return made


def test_each_stage_has_one_entry_point_of_its_execution_model(blobs) -> None:
    for stage, (request, blob) in blobs.items():
        assert entry_points(blob) == [(EXECUTION_MODELS[stage], "main")]
        assert blob_problem(request, blob) is None
        assert blob_problem(request, bytearray(blob)) is None  # a buffer read from a socket counts as bytes


def test_a_blob_of_any_other_stage_is_refused_naming_the_models_it_has(blobs) -> None:
    for stage, (request, _) in blobs.items():
        for other, (_, blob) in blobs.items():
            if other != stage:
                assert blob_problem(request, blob) == \
                    f"no {stage} entry point (entry points: [{EXECUTION_MODELS[other]}])"


def test_a_blob_cut_off_mid_word_is_refused_by_its_size(blobs) -> None:
    _, blob = blobs["fragment"]
    request = blobs["fragment"][0]
    assert blob_problem(request, blob[:-1]) == f"not a SPIR-V module ({len(blob) - 1} bytes)"
    assert blob_problem(request, blob[:19]) == "not a SPIR-V module (19 bytes)"
    assert blob_problem(request, struct.pack("<5I", SPIRV_MAGIC + 1, 0x10500, 0, 1, 0)).endswith("magic number)")


def test_a_zero_length_instruction_is_a_malformed_module_not_an_endless_loop(blobs) -> None:
    request, blob = blobs["fragment"]
    broken = blob[:20] + b"\0\0\0\0" + blob[20:]
    with pytest.raises(ValueError, match="a zero-length instruction at word 5"):
        entry_points(broken)
    assert blob_problem(request, broken) == "a malformed SPIR-V module: a zero-length instruction at word 5"


def test_only_the_leading_section_is_read_where_the_layout_puts_every_entry_point(blobs) -> None:
    _, blob = blobs["fragment"]
    header, rest = blob[:20], blob[20:]
    entry = struct.pack("<3I", (3 + 2) << 16 | 15, 0, 7) + b"vs\0\0" + struct.pack("<I", 9)  # a vertex entry point
    # after the leading section nothing is read: not even a zero-length instruction there stops it
    assert entry_points(header + entry + struct.pack("<2I", 1 << 16 | 19, 0) + rest) == [(0, "vs")]
    # an entry point after the first other instruction (a type) is not where a valid module has one
    assert entry_points(header + struct.pack("<2I", 2 << 16 | 19, 1) + entry) == []
    capability = struct.pack("<2I", 2 << 16 | 17, 1)  # OpCapability Shader: before the entry points
    assert entry_points(header + capability + entry) == [(0, "vs")]


def test_an_entry_point_name_is_read_up_to_its_nul_padding() -> None:
    name = b"PSMain\0\0"  # two words, then one interface id that is not part of the name
    entry = struct.pack("<3I", (3 + 2 + 1) << 16 | 15, 4, 7) + name + struct.pack("<I", 9)
    blob = struct.pack("<5I", SPIRV_MAGIC, 0x10500, 0, 10, 0) + entry
    assert entry_points(blob) == [(4, "PSMain")]
    request = CompileRequest("x.hlsl", "fragment", language="hlsl", entry="PSMain")
    assert blob_problem(request, blob) is None
    assert blob_problem(CompileRequest("x.hlsl", "fragment", language="hlsl", entry="Other"), blob) == \
        "its fragment entry point is ['PSMain'], not 'Other'"


def test_a_real_hlsl_blob_under_another_entry_name_is_refused() -> None:
    request = CompileRequest("simple/simple.hlsl", "vertex", language="hlsl", entry="VSMain")
    output = compile_one(request, SourceTree(DATA / "hlsl"), get_backend("capi"))
    assert output.ok, output.diagnostics
    assert blob_problem(request, output.spirv) is None
    wrong = CompileRequest("simple/simple.hlsl", "vertex", language="hlsl", entry="MainVS")
    assert blob_problem(wrong, output.spirv) == "its vertex entry point is ['VSMain'], not 'MainVS'"


def test_spirv_val_runs_for_the_jobs_target_only_when_asked(blobs) -> None:
    """A SPIR-V 1.5 module is well formed, but not valid for a vulkan1.0 job (SPIR-V 1.0 at most)."""
    request, blob = blobs["fragment"]
    older = CompileRequest(request.source, "fragment", target="vulkan1.0")
    assert blob_problem(older, blob) is None
    problem = blob_problem(older, blob, validate=True)
    assert problem.startswith("spirv-val (vulkan1.0): ") and "version 1.5" in problem
    assert blob_problem(request, blob, validate=True) is None


def test_a_text_target_takes_the_preprocessed_text_of_a_real_compile(tmp_path: Path) -> None:
    (tmp_path / "es.frag").write_text("precision mediump float;\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n")
    request = CompileRequest("es.frag", "fragment", target="webgl2")
    output = compile_one(request, SourceTree(tmp_path), get_backend("capi"))
    assert output.ok, output.diagnostics
    assert blob_problem(request, output.spirv, validate=True) is None  # no spirv-val for text
    assert blob_problem(request, "a str, not bytes") == "the blob is str, not bytes"


def test_a_metal_blob_is_msl_text_declaring_the_stage_s_entry_point(blobs) -> None:
    request, spirv = blobs["fragment"]
    metal = CompileRequest(request.source, "fragment", target="metal")
    from pipeline.compilers.msl import to_msl

    text = to_msl(spirv, metal)
    assert blob_problem(metal, text, validate=True) is None
    assert "no fragment function" in blob_problem(metal, text.replace(b"fragment ", b"vertex "))
    assert "NUL" in blob_problem(metal, text + b"\0") and "not UTF-8" in blob_problem(metal, b"\xff\xfe")
    assert "empty" in blob_problem(metal, b"  \n")
    assert "not a SPIR-V module" in blob_problem(CompileRequest(request.source, "fragment", target="vulkan1.2"), text)


def test_a_webgpu_blob_is_wgsl_text_declaring_the_stage_s_entry_point(blobs) -> None:
    request, spirv = blobs["fragment"]
    webgpu = CompileRequest(request.source, "fragment", target="webgpu")
    text = b"@fragment \nfn main() -> @location(0) vec4<f32> {\n    return vec4<f32>(1f);\n}\n"
    assert blob_problem(webgpu, text, validate=True) is None
    assert blob_problem(webgpu, text.replace(b"main", b"PSMain")) == \
        "the WGSL text declares no @fragment function 'main'"
    assert blob_problem(CompileRequest(request.source, "vertex", target="webgpu"), text) == \
        "the WGSL text declares no @vertex function 'main'"
    assert blob_problem(webgpu, spirv) == "a WGSL text blob holds NUL bytes"  # the SPIR-V it was translated from
    assert "not UTF-8" in blob_problem(webgpu, b"\xff\xfe")
