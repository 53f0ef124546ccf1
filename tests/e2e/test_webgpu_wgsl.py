"""The webgpu target end to end: a studio-style HLSL family (``register(b0)``, ``register(t0)``,
``register(s0)``, ``clip()``) cooked for Vulkan, Metal and WebGPU from one pipeline.toml.  A cbuffer packed
the HLSL way (a float3 right after a float) has no WGSL layout: that is a located error of the webgpu target
alone, with what to write instead; written portably, every stage's WGSL is accepted by naga and ``pipeline
runtime check`` makes its render pipelines through wgpu on lavapipe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from family_worlds import triangle_world
from paths import TESTS
from runtime_helpers import needs_naga, needs_vulkan, needs_wgpu

from pipeline.cli import main
from pipeline.compilers import naga
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader

pytestmark = [needs_vulkan, needs_wgpu, needs_naga]
HLSL = TESTS / "data" / "hlsl"
TEXTURED = {"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}
MATERIALS = [({"name": "plain"}, ("TEXCOORD_0",)), ({"name": "textured", **TEXTURED}, ("TEXCOORD_0",)),
             ({"name": "masked", "alphaMode": "MASK", **TEXTURED}, ("TEXCOORD_0",))]
TARGETS = '[cook.compile]\nstudio = ["vulkan1.2", "metal", "webgpu"]\n'
HLSL_PACKED, PORTABLE = "    float3 padding;\n", "    float padding0;\n    float padding1;\n    float padding2;\n"


def studio_world(tmp_path: Path, portable: bool) -> Path:
    materials = tmp_path / "hlsl"
    shutil.copytree(HLSL, materials)
    source = materials / "studio" / "studio.hlsl"
    text = source.read_text()
    assert HLSL_PACKED in text
    if portable:
        source.write_text(text.replace(HLSL_PACKED, PORTABLE))
    return triangle_world(tmp_path / "world", materials / "studio_rules", materials, MATERIALS, TARGETS)


def cook(world: Path, out: Path):
    cooked = CliRunner().invoke(main, ["cook", str(world), "--out", str(out), "--cache", str(out.parent / "cache"),
                                       "-q"])
    return cooked, mf.load_chunk_manifest(out / "level" / "props.json")


def test_a_cbuffer_packed_the_hlsl_way_fails_the_webgpu_target_alone(tmp_path: Path) -> None:
    cooked, manifest = cook(studio_world(tmp_path, portable=False), tmp_path / "out")
    assert cooked.exit_code == 1
    errors = [line for line in cooked.output.splitlines() if ": error: " in line]
    assert errors and all("studio.hlsl: error: webgpu: naga cannot translate the SPIR-V to WGSL: validation: " in e
                          and "The struct member[2] offset 20 is not a multiple of the required alignment 16" in e
                          and naga.UNIFORM_ALIGNMENT in e for e in errors)
    for entry in manifest.keys.values():  # the vertex stage reads no such cbuffer: its WGSL is there
        assert set(entry.targets["webgpu"]) == {"vertex"}
        assert set(entry.targets["vulkan1.2"]) == set(entry.targets["metal"]) == {"vertex", "fragment"}


def test_studio_hlsl_written_portably_gives_wgsl_that_naga_and_wgpu_accept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cooked, manifest = cook(studio_world(tmp_path, portable=True), out)
    assert cooked.exit_code == 0, cooked.output
    pak = PakReader(mf.library_path(out))
    assert len(manifest.keys) == 3
    for text, entry in manifest.keys.items():
        vertex, fragment = (pak.get(entry.targets["webgpu"][s]).decode() for s in ("vertex", "fragment"))
        assert "@vertex \nfn VSMain(@location(0) input_u002e_position: vec3<f32>" in vertex
        assert "@fragment \nfn PSMain(" in fragment
        naga.check(vertex), naga.check(fragment)  # wgpu's naga takes the stored text as it is
        if "TEXTURED=1" in text:  # t0 and s0 are bindings 32 and 64: the default register shifts
            assert "@group(0) @binding(32) \nvar baseColorMap: texture_2d<f32>;" in fragment
            assert "@group(0) @binding(64) \nvar linearSampler: sampler;" in fragment
        if "ALPHA_MODE=MASK" in text:
            assert "discard;" in fragment  # HLSL's clip()
        assert pak.get(entry.targets["metal"]["fragment"]).startswith(b"#include <metal_stdlib>")
    run = CliRunner().invoke(main, ["runtime", "check", str(out), "--json"])
    report = json.loads(run.stdout)
    assert run.exit_code == 0 and report["created"] == report["pipelines"] == 3
    targets = {t["target"]: t for t in report["targets"]}
    assert (targets["webgpu"]["programs"], targets["webgpu"]["created"], targets["webgpu"]["failed"]) == (3, 3, [])
    assert "through wgpu" in targets["webgpu"]["client"]
