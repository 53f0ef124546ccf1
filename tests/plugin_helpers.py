"""A small lit world whose ``lit`` family goes through the example plug-ins of tests/data/plugins:
the loop-unrolling transform (its rule set names it) and, on request, the DXC compile backend
(target ``d3d12``).  A ``plain`` family beside it uses no plug-in.  Three chunks: no lights, two
point lights, four point lights."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from paths import DATA
from robust_helpers import document

PLUGINS = DATA / "plugins"
VERT = "layout(location = 0) in vec3 position;\nvoid main() { gl_Position = vec4(position, 1.0); }\n"
LIT_FRAG = """precision highp float;
layout(location = 0) out vec4 color;
layout(std140) uniform Lights { vec4 lightColor[4]; };
void main() {
    vec3 sum = vec3(0.0);
#pragma unroll_loop_start
    for (int i = 0; i < NUM_LIGHTS; i++) {
        sum += lightColor[i].rgb * float(i + 1);
    }
#pragma unroll_loop_end
    color = vec4(sum, 1.0);
}
"""
PLAIN_FRAG = "#version 450\nlayout(location = 0) out vec4 color;\nvoid main() { color = vec4(1.0); }\n"
PLAIN_VERT = "#version 450\n" + VERT
TARGETS = '[webgl2, {target: vulkan1.2, auto_map: true, version: "310 es"}]'


def lit_rules(transforms: str = '["../plugins/unroll.py:UnrollLoops"]', targets: str = TARGETS) -> str:
    return ("shader: lit\nsources: {vertex: lit.vert, fragment: lit.frag}\n"
            f"transforms: {transforms}\ncompile: {targets}\n"
            "features:\n  NUM_LIGHTS: {values: [0, 1, 2, 4]}\n"
            "derive:\n  NUM_LIGHTS: bucket(chunk.lights.point, [0, 1, 2, 4])\npasses: {forward: {}}\n")


PLAIN_RULES = ("shader: plain\nsources: {vertex: plain.vert, fragment: plain.frag}\n"
               "features:\n  LIT: {type: bool}\nderive:\n  LIT: chunk.lights.point > 0\npasses: {forward: {}}\n")


def lamps(point: int) -> dict:
    return {"asset": {"version": "2.0"}, "scene": 0, "extensionsUsed": ["KHR_lights_punctual"],
            "extensions": {"KHR_lights_punctual": {"lights": [{"type": "point"}] * point}},
            "scenes": [{"nodes": list(range(point))}],
            "nodes": [{"extensions": {"KHR_lights_punctual": {"light": i}}} for i in range(point)]}


def make_world(root: Path, rules: str | None = None, toml: str = "") -> Path:
    world = root / "world"
    for folder in ("town/none", "town/two", "town/four", "rules", "materials"):
        (world / folder).mkdir(parents=True, exist_ok=True)
    shutil.copytree(PLUGINS, world / "plugins", ignore=shutil.ignore_patterns("__pycache__"))
    (world / "pipeline.toml").write_text('rules = "rules"\nmaterials = "materials"\n' + toml)
    (world / "rules" / "lit.yaml").write_text(rules or lit_rules())
    (world / "rules" / "plain.yaml").write_text(PLAIN_RULES)
    for name, text in (("lit.vert", VERT), ("lit.frag", LIT_FRAG), ("plain.vert", PLAIN_VERT),
                       ("plain.frag", PLAIN_FRAG)):
        (world / "materials" / name).write_text(text)
    for chunk, point in (("none", 0), ("two", 2), ("four", 4)):
        (world / "town" / chunk / "mesh.gltf").write_text(json.dumps(document()))
        if point:
            (world / "town" / chunk / "lamps.gltf").write_text(json.dumps(lamps(point)))
    return world
