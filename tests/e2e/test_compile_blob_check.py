"""A blob from elsewhere is checked against the job that asked for it: real glslang blobs pass,
garbage, another stage's shader and an invalid module do not."""

from __future__ import annotations


import pytest

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend
from pipeline.compilers.blob_check import blob_problem, entry_points
from paths import TESTS

HLSL = TESTS / "data" / "hlsl"


@pytest.fixture(scope="module")
def blobs() -> dict[str, tuple[CompileRequest, bytes]]:
    backend, tree = get_backend("capi"), SourceTree(HLSL)
    made = {}
    for stage, entry in (("vertex", "VSMain"), ("fragment", "PSMain")):
        request = CompileRequest("simple/simple.hlsl", stage, language="hlsl", entry=entry)
        output = compile_one(request, tree, backend)
        assert output.ok, output.diagnostics
        made[stage] = (request, output.spirv)
    return made


def test_the_compilers_own_blobs_pass(blobs) -> None:
    for request, blob in blobs.values():
        assert blob_problem(request, blob, validate=True) is None
    assert entry_points(blobs["vertex"][1]) == [(0, "VSMain")]


def test_another_stages_shader_is_refused(blobs) -> None:
    vertex_request, _ = blobs["vertex"]
    _, fragment_blob = blobs["fragment"]
    assert "no vertex entry point" in blob_problem(vertex_request, fragment_blob)


@pytest.mark.parametrize("blob, problem", [
    (b"garbage!", "not a SPIR-V module (8 bytes)"),
    (b"\0" * 24, "no SPIR-V magic number"),
    ([1, 2, 3], "not bytes"),
])
def test_garbage_is_refused(blobs, blob, problem) -> None:
    request, _ = blobs["vertex"]
    assert problem in blob_problem(request, blob)


def test_an_invalid_module_fails_spirv_val_only_when_asked(blobs) -> None:
    request, blob = blobs["fragment"]
    header_only = blob[:20] + blob[-8:]  # the header, then a truncated instruction stream
    assert blob_problem(request, header_only) is not None


def test_a_text_target_takes_utf8_text_only() -> None:
    request = CompileRequest("pbr/pbr.frag", "fragment", target="webgl2")
    assert blob_problem(request, b"#version 300 es\nvoid main() {}\n") is None
    assert "NUL" in blob_problem(request, b"void main()\0")
    assert "UTF-8" in blob_problem(request, b"\xff\xfe")
