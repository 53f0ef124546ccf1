"""The webgpu target's translator (compilers/wgsl.py and naga_driver.mjs): naga-wasm in one long-lived Node
process per compiling process turns validated SPIR-V into WGSL; what naga refuses is its words in one line;
a missing Node.js or package names what to run; the package and the driver are in the job key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from paths import TESTS
from runtime_helpers import needs_naga
from target_helpers import GL_ERA, MATERIALS, compile_pair

from pipeline.compilers import wgsl
from pipeline.compilers.backends import compile_one, get_backend
from pipeline.compilers.request import CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.toolchain import ToolchainError
from pipeline.plan.job_keys import job_key
from pipeline.plan.jobs import JobOptions

PLAIN = (("TEXTURED", "0"), ("VERTEX_COLOR", "1"))
NAGA_REPORT = """error: Entry point main at Vertex is invalid
  ┌─ wgsl:1:1
  │
1 │ x
  │ ^ naga::ir::Type [10]
  │
  = The type [10] cannot be used for user-defined entry point inputs or outputs.
  = The type [10] cannot be used for user-defined entry point inputs or outputs.
"""


def test_summary_keeps_naga_s_report_in_one_line_without_frames_or_repeats() -> None:
    assert wgsl.summary(NAGA_REPORT) == ("Entry point main at Vertex is invalid; The type [10] cannot be used for "
                                         "user-defined entry point inputs or outputs.")
    assert wgsl.summary("\n  \n") == "refused"


@needs_naga
def test_a_module_round_trips_to_wgsl_declaring_its_stage_s_entry_point() -> None:
    outputs = compile_pair("portable", "vulkan1.2", PLAIN, **GL_ERA)
    vertex, fragment = wgsl.to_wgsl(outputs["vertex"].spirv), wgsl.to_wgsl(outputs["fragment"].spirv)
    assert "@vertex \nfn main(@location(1) a_normal: vec3<f32>, @location(0) a_position: vec3<f32>" in vertex
    assert "@group(0) @binding(16) \nvar<uniform>" in fragment  # the fragment stage's auto_map base binding
    assert "-> @location(0) vec4<f32>" in fragment
    request = CompileRequest("portable/portable.frag", "fragment", target="webgpu")
    assert wgsl.text_problem(request, fragment) is None
    assert wgsl.text_problem(request, vertex) == "the WGSL text declares no @fragment function 'main'"
    assert wgsl.to_wgsl(outputs["vertex"].spirv) == vertex  # the same module, the same text


@needs_naga
def test_the_driver_process_is_started_once_and_reused_across_translations(monkeypatch) -> None:
    outputs = compile_pair("portable", "vulkan1.2", PLAIN, **GL_ERA)
    first = wgsl.translator()
    before = first.translations
    for output in [*outputs.values(), *outputs.values()]:
        wgsl.to_wgsl(output.spirv)
    assert wgsl.translator() is first and first.alive and first.translations == before + 4
    assert first.naga_version == "30.0.1"
    monkeypatch.setattr(wgsl.os, "getpid", lambda: -1)  # as a forked compile worker sees itself
    forked = wgsl.translator()
    assert forked is not first and forked.process.pid != first.process.pid
    wgsl.close()
    assert not forked.alive and forked.process.returncode == 0  # its stdin closed: it exited by itself


@needs_naga
def test_a_module_naga_refuses_is_a_translate_error_and_the_process_goes_on() -> None:
    textured = compile_pair("portable", "vulkan1.2", (("TEXTURED", "1"), ("VERTEX_COLOR", "0")), **GL_ERA)
    with pytest.raises(wgsl.TranslateError, match=r"^parse: InvalidId\(\d+\)$") as caught:
        wgsl.to_wgsl(textured["fragment"].spirv)
    assert caught.value.kind == "parse"
    request = CompileRequest("glpair/pair.vert", "vertex", defines=(("TEXTURED", "0"), ("VERTEX_COLOR", "0")),
                             target="vulkan1.2", **GL_ERA)
    matrix = compile_one(request, SourceTree(TESTS / "data" / "glpair" / "materials"), get_backend("capi"))
    with pytest.raises(wgsl.TranslateError, match="^validation: .*Only numeric scalars and vectors are allowed"):
        wgsl.to_wgsl(matrix.spirv)
    assert wgsl.translator().alive and "@vertex" in wgsl.to_wgsl(textured["vertex"].spirv)


@needs_naga
def test_a_refused_module_is_a_located_error_of_the_webgpu_job() -> None:
    request = CompileRequest("glpair/pair.vert", "vertex", defines=(("TEXTURED", "0"), ("VERTEX_COLOR", "0")),
                             target="webgpu", **GL_ERA)
    output = compile_one(request, SourceTree(TESTS / "data" / "glpair" / "materials"), get_backend("capi"))
    (error,) = output.errors
    assert output.spirv is None and error.location.file.endswith("glpair/pair.vert")
    assert error.message.startswith("webgpu: naga cannot translate the SPIR-V to WGSL: validation: Entry point main")


def test_a_missing_package_or_node_names_what_to_run(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv(wgsl.ENV, str(tmp_path))
    with pytest.raises(ToolchainError, match=r"needs the npm package naga-wasm .*run script/bootstrap "
                                             r"\(npm ci in tools/naga\), or set PIPELINE_NAGA_WASM") as caught:
        wgsl.package_dir()
    assert caught.value.where == str(tmp_path)
    monkeypatch.setattr(wgsl.shutil, "which", lambda name: None)
    with pytest.raises(ToolchainError, match="needs Node.js on PATH .*Debian packages nodejs and npm"):
        wgsl.node()


@needs_naga
def test_the_identity_names_the_package_the_naga_it_carries_and_the_driver(monkeypatch, tmp_path: Path) -> None:
    import hashlib

    wgsl.identity.cache_clear()
    driver = hashlib.sha256(wgsl.DRIVER.read_bytes()).hexdigest()[:16]
    assert wgsl.identity() == f"naga-wasm 30.1.0 (naga 30.0.1); driver sha256:{driver}"
    other = tmp_path / "naga-wasm"
    shutil.copytree(wgsl.package_dir(), other)
    meta = json.loads((other / "package.json").read_text())
    (other / "package.json").write_text(json.dumps(meta | {"version": "30.2.0"}))
    request = CompileRequest("portable/portable.frag", "fragment", target="webgpu")
    closure, options = SourceTree(MATERIALS).closure(request.source), JobOptions(compiler="c")
    before = job_key(request, closure, options)
    monkeypatch.setenv(wgsl.ENV, str(other))
    wgsl.identity.cache_clear()
    try:
        assert wgsl.identity().startswith("naga-wasm 30.2.0 (naga 30.0.1); driver sha256:")
        assert job_key(request, closure, options) != before  # another naga-wasm: the webgpu job recompiles
    finally:
        monkeypatch.undo()
        wgsl.identity.cache_clear()


@needs_naga
def test_a_driver_that_died_is_a_toolchain_error_and_the_next_call_starts_another() -> None:
    outputs = compile_pair("portable", "vulkan1.2", PLAIN, **GL_ERA)
    dead = wgsl.translator()
    dead.process.kill()
    dead.process.wait()
    with pytest.raises(ToolchainError, match=r"naga's driver \(node\) (ended|stopped), exit -9"):
        dead.translate(outputs["vertex"].spirv)
    fresh = wgsl.translator()
    assert fresh is not dead and "@vertex" in wgsl.to_wgsl(outputs["vertex"].spirv)
