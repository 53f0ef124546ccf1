"""Helpers for the rule-set tests: draw facts built in code, rule sets from dicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipeline.builtin import builtin_rules_dir
from pipeline.facts import (
    Attribute,
    ChunkFacts,
    Draw,
    DrawFacts,
    DrawSource,
    MaterialFacts,
    MeshFacts,
    NodeFacts,
)
from pipeline.rules.load import load_ruleset_text, load_rulesets
from pipeline.rules.models import RuleSet
from pipeline.facts import load

FLOAT = 5126
ATTRIBUTE_TYPES = {"POSITION": "VEC3", "NORMAL": "VEC3", "TANGENT": "VEC4", "TEXCOORD_0": "VEC2",
                   "TEXCOORD_1": "VEC2", "COLOR_0": "VEC4", "JOINTS_0": "VEC4", "WEIGHTS_0": "VEC4",
                   "JOINTS_1": "VEC4", "WEIGHTS_1": "VEC4"}


def mesh(*attributes: str, color: str | None = None, **fields: Any) -> MeshFacts:
    """Mesh facts with the given vertex attributes (POSITION always)."""
    names = ("POSITION", *attributes)
    attrs = {n: Attribute(type=color if n == "COLOR_0" and color else ATTRIBUTE_TYPES.get(n, "VEC4"),
                          componentType=FLOAT) for n in names}
    base = dict(
        attributes=attrs, indexed=True, vertexCount=24,
        texcoordSets=sum(n.startswith("TEXCOORD_") for n in names),
        colorType=(color or "VEC4") if "COLOR_0" in names else None,
        jointSets=sum(n.startswith("JOINTS_") for n in names),
        weightSets=sum(n.startswith("WEIGHTS_") for n in names),
        normals="NORMAL" in names, tangents="TANGENT" in names,
    )
    return MeshFacts(**{**base, **fields})


def facts(mesh_facts: MeshFacts | None = None, material: dict | None = None, node: dict | None = None,
          chunk: str = "level/c00") -> DrawFacts:
    return DrawFacts(
        mesh=mesh_facts or mesh("NORMAL"),
        material=load(MaterialFacts, material or {}),
        node=NodeFacts(**(node or {})),
        chunk=ChunkFacts(name=chunk, level=chunk.split("/")[0]),
    )


def draw(f: DrawFacts, file: str = "a.gltf", node: int = 0, material: int | None = 0) -> Draw:
    source = DrawSource(file=file, chunk=f.chunk.name, level=f.chunk.level, node=node, mesh=0, primitive=0,
                        material=material)
    return Draw(source=source, facts=f)


def texture(uv: int = 0, transform: bool = False) -> dict:
    return {"index": 0, "texCoord": uv, "uv": uv, "transform": transform}


def pbr() -> RuleSet:
    return next(rs for rs in _builtin() if rs.shader == "pbr")


_CACHE: list[RuleSet] = []


def _builtin() -> list[RuleSet]:
    if not _CACHE:
        _CACHE.extend(load_rulesets(builtin_rules_dir()))
    return _CACHE


def ruleset_from(data: dict, path: str = "test.yaml") -> RuleSet:
    """A rule set from a Python dict (dumped to YAML and loaded like a file)."""
    return load_ruleset_text(yaml.safe_dump(data, sort_keys=False), path)


def small_ruleset(features: dict, normalize: list | None = None, passes: dict | None = None,
                  derive: dict | None = None, **extra: Any) -> RuleSet:
    data = {"shader": "t", "sources": {"vertex": "t.vert", "fragment": "t.frag"}, "features": features,
            "derive": derive or {}, "normalize": normalize or [], "passes": passes or {"main": {"features": "all"}},
            **extra}
    return ruleset_from(data)


def write_rules(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder
