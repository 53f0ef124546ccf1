"""A small world whose ``wet`` family reads a fact provider (tests/data/plugins/sidecar_facts.py):
three chunks, each one glTF file; two carry a material sidecar (``mesh.material.json``) giving the
wetness of material 0, the third has none (wetness 0)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from paths import DATA
from robust_helpers import document

PLUGINS = DATA / "plugins"
VERT = "#version 450\nlayout(location = 0) in vec3 position;\nvoid main() { gl_Position = vec4(position, 1.0); }\n"
FRAG = ("#version 450\nlayout(location = 0) out vec4 color;\n"
        "void main() { color = vec4(float(WETNESS) / 2.0, float(SOAKED), 0.0, 1.0); }\n")
PROVIDER = "../plugins/sidecar_facts.py:Wetness"


def wet_rules(provider: str = PROVIDER, wetness: str = "min(ext.wetness.level, 2)",
              soaked: str = "ext.wetness.surface == 'soaked'") -> str:
    return ("shader: wet\n"
            f'fact_providers: ["{provider}"]\n'
            "sources: {vertex: wet.vert, fragment: wet.frag}\n"
            "compile: [{target: vulkan1.2}]\n"
            "features:\n  WETNESS: {values: [0, 1, 2]}\n  SOAKED: {type: bool}\n"
            f"derive:\n  WETNESS: {wetness}\n  SOAKED: {soaked}\n"
            "passes: {forward: {}}\n")


def sidecar(level: int, surface: str | None = None) -> str:
    entry = {"wetness": level} | ({"surface": surface} if surface else {})
    return json.dumps({"materials": {"0": entry}})


def make_world(root: Path, rules: str | None = None, sidecars: dict[str, str] | None = None) -> Path:
    """``root/world``: chunks town/a (wetness 1), town/b (wetness 2, soaked), town/c (no sidecar)."""
    world = root / "world"
    for folder in ("town/a", "town/b", "town/c", "rules", "materials"):
        (world / folder).mkdir(parents=True, exist_ok=True)
    shutil.copytree(PLUGINS, world / "plugins", ignore=shutil.ignore_patterns("__pycache__"))
    (world / "pipeline.toml").write_text('rules = "rules"\nmaterials = "materials"\n')
    (world / "rules" / "wet.yaml").write_text(rules or wet_rules())
    (world / "materials" / "wet.vert").write_text(VERT)
    (world / "materials" / "wet.frag").write_text(FRAG)
    for chunk in ("a", "b", "c"):
        (world / "town" / chunk / "mesh.gltf").write_text(json.dumps(document()))
    for chunk, text in (sidecars if sidecars is not None else {"a": sidecar(1), "b": sidecar(2, "soaked")}).items():
        (world / "town" / chunk / "mesh.material.json").write_text(text)
    return world
