"""Reading and rewriting a module's interface word by word, checked against spirv-val and SPIRV-Cross."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend, validate
from pipeline.compilers.spirv_module import INPUT, OUTPUT, Module
from pipeline.compilers.spirv_tools import optimize
from pipeline.compilers.reflect import reflect

VERTEX = """#version 450
layout(location = 0) in vec3 pos;
layout(location = 2) out mat3 frame;
layout(location = 5) out vec2 uv[2];
layout(location = 9) out dvec4 wide;
void main() { frame = mat3(1.0); uv[0] = pos.xy; uv[1] = pos.yz; wide = dvec4(1.0); gl_Position = vec4(pos, 1.0); }
"""


def compiled(folder: Path, target: str) -> bytes:
    (folder / "v.vert").write_text(VERTEX)
    out = compile_one(CompileRequest("v.vert", "vertex", target=target), SourceTree(folder), get_backend("capi"))
    assert out.ok
    return out.spirv


@pytest.fixture(scope="module")
def blob(tmp_path_factory) -> bytes:
    return compiled(tmp_path_factory.mktemp("m"), "vulkan1.2")


def test_varyings_with_their_locations_and_sizes(blob: bytes) -> None:
    module = Module(blob)
    assert {n: v[1:] for n, v in module.varyings(OUTPUT).items()} == {"frame": (2, 3), "uv": (5, 2), "wide": (9, 2)}
    assert {n: v[1:] for n, v in module.varyings(INPUT).items()} == {"pos": (0, 1)}  # gl_PerVertex: a builtin
    assert Module(blob).to_bytes() == blob  # read and written back: the same words


def test_relocate_changes_only_the_location_literals(blob: bytes) -> None:
    module = Module(blob)
    module.relocate({module.varyings(OUTPUT)["uv"][0]: 0, module.varyings(OUTPUT)["frame"][0]: 2})
    moved = module.to_bytes()
    assert len(moved) == len(blob) and validate(moved) == []
    assert {v["name"]: v["location"] for v in reflect(moved)["outputs"]} == {"frame": 2, "uv": 0, "wide": 9}


@pytest.mark.parametrize("target", ["vulkan1.0", "vulkan1.2"])
def test_privatized_outputs_are_valid_and_dead_code_removes_them(tmp_path: Path, target: str) -> None:
    """SPIR-V 1.0 (vulkan1.0) lists only inputs and outputs in an entry point's interface; 1.5 every global."""
    module = Module(compiled(tmp_path, target))
    module.privatize({module.varyings(OUTPUT)[name][0] for name in ("uv", "wide")})
    private = module.to_bytes()
    assert validate(private, target) == []
    assert [v["name"] for v in reflect(private)["outputs"]] == ["frame"]
    cleaned = optimize(private, target, ("--eliminate-dead-code-aggressive", "--eliminate-dead-variables"))
    assert validate(cleaned, target) == [] and len(cleaned) < len(private)
    assert set(Module(cleaned).variables) < set(module.variables)  # uv and wide are gone


def test_a_truncated_module_is_a_value_error(blob: bytes) -> None:
    with pytest.raises(ValueError, match="runs past"):
        Module(blob[:20] + struct.pack("<3I", 5 << 16 | 17, 1, 1))  # a five-word instruction, three words left
