"""Two shader families in one cook: pbr (GLSL) and the small HLSL family "simple".

A generated one-chunk world holds pbr materials and materials whose extras say
``shader: simple``; the rules folder holds both families and the shader library
both source trees.  The HLSL keys must come out as valid SPIR-V whose entry
points are the family's (VSMain, PSMain).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline import api
from pipeline.compilers import disassemble, validate
from pipeline.outputs.read_outputs import load_chunk
from pipeline.compile.scheduler import JobRunner
from family_worlds import write_triangles
from paths import REPO

ROOT = REPO
FAMILY = ROOT / "tests" / "data" / "hlsl"  # rules/simple.yaml and its HLSL sources

def mixed_world(path: Path) -> Path:
    """A chunk with two pbr and three 'simple' materials on one triangle mesh each."""
    textured = {"baseColorTexture": {"index": 0}}
    materials = [
        {"name": "pbr-plain"},
        {"name": "pbr-masked", "alphaMode": "MASK", "pbrMetallicRoughness": textured},
        {"name": "hlsl-plain", "extras": {"shader": "simple"}},
        {"name": "hlsl-textured", "extras": {"shader": "simple"}, "pbrMetallicRoughness": textured},
        {"name": "hlsl-blend", "extras": {"shader": "simple"}, "alphaMode": "BLEND"},
    ]
    write_triangles(path / "level" / "mixed",
                    [(m, ("TEXCOORD_0", "COLOR_0") if i == 4 else ("TEXCOORD_0",)) for i, m in enumerate(materials)])
    return path


@pytest.fixture
def site(tmp_path: Path):
    """World, rules (pbr + simple) and materials (pbr/ + simple/ + common/) under tmp_path."""
    rules, materials = tmp_path / "rules", tmp_path / "materials"
    rules.mkdir()
    shutil.copy(ROOT / "rules" / "pbr.yaml", rules)
    shutil.copy(FAMILY / "rules" / "simple.yaml", rules)
    shutil.copytree(ROOT / "materials", materials)
    shutil.copytree(FAMILY, materials, dirs_exist_ok=True)
    return mixed_world(tmp_path / "world"), rules, materials


def test_hlsl_and_glsl_families_cook_together(site, tmp_path: Path) -> None:
    world_dir, rules, materials = site
    world = api.open_world(world_dir, rules=rules, materials=materials)
    compiler = JobRunner(materials, "capi", 1)
    result = api.cook(world, cache=tmp_path / "cache", out=tmp_path / "out", jobs=1, compiler=compiler)
    assert result.errors == []
    shaders = {k.shader for k in result.plan.stages}
    assert shaders == {"pbr", "simple"}
    simple_keys = sorted(k.text for k in result.plan.stages if k.shader == "simple")
    assert simple_keys == ["simple/forward{ALPHA_MODE=BLEND,TEXTURED=0,VERTEX_COLOR=1}",
                           "simple/forward{ALPHA_MODE=OPAQUE,TEXTURED=0,VERTEX_COLOR=0}",
                           "simple/forward{ALPHA_MODE=OPAQUE,TEXTURED=1,VERTEX_COLOR=0}"]

    manifest, pak = load_chunk(tmp_path / "out", "level/mixed")  # the index and the shader library
    entries = {text: e for text, e in manifest.keys.items() if e.shader == "simple"}
    assert sorted(entries) == simple_keys
    for entry in entries.values():
        for stage, entry_point, model in (("vertex", "VSMain", "Vertex"), ("fragment", "PSMain", "Fragment")):
            spirv = pak.get(entry.stages[stage])
            assert validate(spirv) == []
            assert f'OpEntryPoint {model} %' in disassemble(spirv)
            assert f'"{entry_point}"' in disassemble(spirv)

