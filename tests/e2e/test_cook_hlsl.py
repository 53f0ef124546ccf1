"""Two shader families in one cook: pbr (GLSL) and the small HLSL family "simple".

A generated one-chunk world holds pbr materials and materials whose extras say
``shader: simple``; the rules folder holds both families and the shader library
both source trees.  The HLSL keys must come out as valid SPIR-V whose entry
points are the family's (VSMain, PSMain).
"""

from __future__ import annotations

import base64
import json
import shutil
import struct
from pathlib import Path

import pytest

from pipeline import api
from pipeline.compilers import disassemble, validate
from pipeline.outputs.read_outputs import load_chunk
from pipeline.compile.scheduler import JobRunner
from paths import REPO

ROOT = REPO
FAMILY = ROOT / "tests" / "data" / "hlsl"  # rules/simple.yaml and its HLSL sources
FLOAT = 5126


def triangle_buffer() -> tuple[bytes, list[dict], list[dict]]:
    """One triangle: POSITION, NORMAL, TEXCOORD_0, COLOR_0 as float accessors."""
    columns = [
        ("VEC3", [0, 0, 0, 1, 0, 0, 0, 1, 0], {"min": [0, 0, 0], "max": [1, 1, 0]}),
        ("VEC3", [0, 0, 1] * 3, {}),
        ("VEC2", [0, 0, 1, 0, 0, 1], {}),
        ("VEC4", [1, 0.5, 0.5, 1] * 3, {}),
    ]
    data, views, accessors = b"", [], []
    for kind, values, extra in columns:
        views.append({"buffer": 0, "byteOffset": len(data), "byteLength": 4 * len(values)})
        accessors.append({"bufferView": len(views) - 1, "componentType": FLOAT, "count": 3, "type": kind, **extra})
        data += struct.pack(f"<{len(values)}f", *values)
    return data, views, accessors


def mixed_world(path: Path) -> Path:
    """A chunk with two pbr and three 'simple' materials on one triangle mesh."""
    data, views, accessors = triangle_buffer()
    textured = {"baseColorTexture": {"index": 0}}
    materials = [
        {"name": "pbr-plain"},
        {"name": "pbr-masked", "alphaMode": "MASK", "pbrMetallicRoughness": textured},
        {"name": "hlsl-plain", "extras": {"shader": "simple"}},
        {"name": "hlsl-textured", "extras": {"shader": "simple"}, "pbrMetallicRoughness": textured},
        {"name": "hlsl-blend", "extras": {"shader": "simple"}, "alphaMode": "BLEND"},
    ]
    with_color = {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2, "COLOR_0": 3}
    meshes = [{"primitives": [{"attributes": with_color if i == 4 else {k: v for k, v in with_color.items()
                                                                          if k != "COLOR_0"},
                               "material": i}]} for i in range(len(materials))]
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": list(range(len(meshes)))}],
        "nodes": [{"mesh": i} for i in range(len(meshes))], "meshes": meshes, "materials": materials,
        "textures": [{"source": 0}], "images": [{"uri": "albedo.png"}],
        "buffers": [{"byteLength": len(data),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode()}],
        "bufferViews": views, "accessors": accessors,
    }
    chunk = path / "level" / "mixed"
    chunk.mkdir(parents=True)
    (chunk / "things.gltf").write_text(json.dumps(doc, indent=1))
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

