"""Light setups per chunk: ``chunk.lights`` counts the KHR_lights_punctual light nodes of
every file of a chunk (or of a grid cell), so a mesh file and a separate lighting file of
one chunk give the mesh's draws the chunk's lights.  Real scans, rules and compiles.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from robust_helpers import document

from pipeline import api
from pipeline.outputs.manifest import load_chunk_manifest

LIT_RULES = (
    "shader: lit\nsources: {vertex: lit.vert, fragment: lit.frag}\n"
    "features:\n  LIGHTS_DIRECTIONAL: {values: [0, 1, 2]}\n  LIGHTS_POINT: {values: [0, 1, 2, 4]}\n"
    "  LIGHTS_SPOT: {values: [0, 1, 2]}\n"
    "derive:\n  LIGHTS_DIRECTIONAL: bucket(chunk.lights.directional, [0, 1, 2])\n"
    "  LIGHTS_POINT: bucket(chunk.lights.point, [0, 1, 2, 4])\n"
    "  LIGHTS_SPOT: bucket(chunk.lights.spot, [0, 1, 2])\npasses: {forward: {}}\n")
LIT_VERT = "#version 450\nlayout(location=0) in vec3 p;\nvoid main() { gl_Position = vec4(p, 1); }\n"
LIT_FRAG = ("#version 450\nlayout(location=0) out vec4 o;\n"
            "void main() { o = vec4(float(LIGHTS_POINT), float(LIGHTS_SPOT), float(LIGHTS_DIRECTIONAL), 1); }\n")


def lamps(point: int, spot: int, directional: int = 0, at: tuple[float, float, float] = (0, 2, 0)) -> dict:
    """A lighting file: light nodes only, no mesh."""
    types = ["point"] * point + ["spot"] * spot + ["directional"] * directional
    return {
        "asset": {"version": "2.0"}, "scene": 0, "extensionsUsed": ["KHR_lights_punctual"],
        "extensions": {"KHR_lights_punctual": {"lights": [{"type": t} | ({"spot": {}} if t == "spot" else {})
                                                         for t in types]}},
        "scenes": [{"nodes": list(range(len(types)))}],
        "nodes": [{"translation": list(at), "extensions": {"KHR_lights_punctual": {"light": i}}}
                  for i in range(len(types))],
    }


def moved(doc: dict, x: float) -> dict:
    doc = copy.deepcopy(doc)
    doc["nodes"][0]["translation"] = [x, 0, 0]
    return doc


def make_world(root: Path, toml: str = "level_depth = 1\n") -> Path:
    world = root / "world"
    for folder in ("town/yard", "town/dark", "rules", "materials"):
        (world / folder).mkdir(parents=True, exist_ok=True)
    (world / "pipeline.toml").write_text('rules = "rules"\nmaterials = "materials"\n' + toml)
    (world / "rules" / "lit.yaml").write_text(LIT_RULES)
    (world / "materials" / "lit.vert").write_text(LIT_VERT)
    (world / "materials" / "lit.frag").write_text(LIT_FRAG)
    (world / "town" / "yard" / "mesh.gltf").write_text(json.dumps(document()))
    (world / "town" / "yard" / "lamps.gltf").write_text(json.dumps(lamps(point=2, spot=1, directional=1)))
    (world / "town" / "dark" / "mesh.gltf").write_text(json.dumps(document()))
    return world


def key_texts(found) -> dict[str, list[str]]:
    return {chunk: [k.text for k in req.keys] for chunk, req in sorted(found.by_chunk.items())}


def test_a_chunk_s_lights_reach_the_draws_of_its_other_files(tmp_path) -> None:
    world = make_world(tmp_path)
    found = api.keys(world, cache=tmp_path / "cache")
    assert key_texts(found) == {
        "town/dark": ["lit/forward{LIGHTS_DIRECTIONAL=0,LIGHTS_POINT=0,LIGHTS_SPOT=0}"],
        "town/yard": ["lit/forward{LIGHTS_DIRECTIONAL=1,LIGHTS_POINT=2,LIGHTS_SPOT=1}"],
    }
    (draw,) = [d for d in found.scan.draws if d.source.chunk == "town/yard"]
    assert (draw.facts.chunk.lights.point, draw.facts.chunk.lights.spot, draw.facts.chunk.lights.directional) == (2, 1, 1)
    assert draw.facts.scene.lights.point == 0  # the lights are in another file's scene
    again = api.keys(world, cache=tmp_path / "cache")  # from the scan cache: the same facts
    assert key_texts(again) == key_texts(found)
    assert [d.facts for d in again.scan.draws] == [d.facts for d in found.scan.draws]


def test_a_file_scope_sees_the_lights_of_its_whole_chunk(tmp_path) -> None:
    world = make_world(tmp_path)
    for cache in ("cold", "warm"):
        found = api.keys(api.open_world(world / "town" / "yard" / "mesh.gltf"), cache=tmp_path / "cache")
        assert found.scan.files == ["town/yard/mesh.gltf"], cache
        assert [k.text for k in found.required.keys] == ["lit/forward{LIGHTS_DIRECTIONAL=1,LIGHTS_POINT=2,LIGHTS_SPOT=1}"]


def test_editing_the_lighting_file_recooks_the_chunk_with_its_new_light_setup(tmp_path) -> None:
    world = make_world(tmp_path)
    out, cache = tmp_path / "out", tmp_path / "cache"
    first = api.cook(world, cache=cache, out=out, jobs=1)
    assert first.ok, first.errors
    manifest = load_chunk_manifest(out / "town" / "yard.json")
    assert list(manifest.keys) == ["lit/forward{LIGHTS_DIRECTIONAL=1,LIGHTS_POINT=2,LIGHTS_SPOT=1}"]
    (world / "town" / "yard" / "lamps.gltf").write_text(json.dumps(lamps(point=4, spot=0)))
    second = api.cook(world, cache=cache, out=out, jobs=1)
    assert second.ok, second.errors
    manifest = load_chunk_manifest(out / "town" / "yard.json")
    assert list(manifest.keys) == ["lit/forward{LIGHTS_DIRECTIONAL=0,LIGHTS_POINT=4,LIGHTS_SPOT=0}"]
    assert second.written and not [p for p in second.written if "dark" in p]  # the other chunk is untouched


@pytest.mark.parametrize("lamp_x, lit_cell", [(5.0, "town/x0_z0"), (15.0, "town/x1_z0")])
def test_in_a_grid_level_a_cell_holds_the_lights_placed_in_it(tmp_path, lamp_x, lit_cell) -> None:
    world = make_world(tmp_path, 'level_depth = 1\n[levels.town]\nchunking = { grid = 10.0 }\n')
    yard = world / "town" / "yard"
    (yard / "mesh.gltf").write_text(json.dumps(moved(document(), 2.0)))
    (yard / "far.gltf").write_text(json.dumps(moved(document(), 12.0)))
    (yard / "lamps.gltf").write_text(json.dumps(lamps(point=1, spot=0, at=(lamp_x, 2, 0))))
    found = api.keys(world, cache=tmp_path / "cache")
    lit = {chunk: keys for chunk, keys in key_texts(found).items()
           if keys == ["lit/forward{LIGHTS_DIRECTIONAL=0,LIGHTS_POINT=1,LIGHTS_SPOT=0}"]}
    assert list(lit) == [lit_cell]
    assert len(found.by_chunk) == 2
