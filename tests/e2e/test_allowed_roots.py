"""A shader library reaching into an allowed root: cook, report, explain and verify-family all read it.

The world's own rule set names a fragment shader that includes ``common/tint.glsl``,
where ``common`` is a folder link to a folder outside the world; pipeline.toml's
``allowed_roots`` names that folder.  Every command plans its jobs through the one job
plan (:mod:`pipeline.plan.setup`), so none of them may refuse the include.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from robust_helpers import document
from startup_helpers import pipeline


RULES = """\
shader: lit
description: a flat colour from a library shared between worlds
sources: {vertex: lit/lit.vert, fragment: lit/lit.frag}
features:
  DOUBLE: {type: bool, description: material.doubleSided}
derive:
  DOUBLE: material.doubleSided
passes:
  forward: {}
"""
VERTEX = """\
#version 450
layout(location = 0) in vec3 position;
void main() { gl_Position = vec4(position, 1.0); }
"""
FRAGMENT = """\
#version 450
#include "common/tint.glsl"
layout(location = 0) out vec4 color;
void main() {
#if DOUBLE
    color = tint() * 0.5;
#else
    color = tint();
#endif
}
"""
TINT = "vec4 tint() { return vec4(1.0, 0.5, 0.25, 1.0); }\n"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """``world/`` (its rules and shaders inside it) whose shader library links to ``shared/`` beside it."""
    shared, world = tmp_path / "shared", tmp_path / "world"
    shared.mkdir()
    (shared / "tint.glsl").write_text(TINT)
    (world / "rules").mkdir(parents=True)
    (world / "rules" / "lit.yaml").write_text(RULES)
    (world / "shaders" / "lit").mkdir(parents=True)
    (world / "shaders" / "lit" / "lit.vert").write_text(VERTEX)
    (world / "shaders" / "lit" / "lit.frag").write_text(FRAGMENT)
    (world / "shaders" / "lit" / "common").symlink_to(shared, target_is_directory=True)
    (world / "props").mkdir()
    single, double = document(), document()
    double["materials"][0]["doubleSided"] = True
    (world / "props" / "single.gltf").write_text(json.dumps(single))
    (world / "props" / "double.gltf").write_text(json.dumps(double))
    (world / "pipeline.toml").write_text('rules = "rules"\nmaterials = "shaders"\nallowed_roots = ["../shared"]\n')
    return world


@pytest.mark.slow
def test_every_command_reads_a_library_reaching_into_an_allowed_root(world: Path, tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    cook = pipeline("cook", world, "--cache", cache, "--out", out, "-q", "-j", "1", "--json", cwd=tmp_path)
    assert cook.returncode == 0, cook.stderr
    cooked = json.loads(cook.stdout)
    assert cooked["errors"] == [] and cooked["required_keys"] == 2 and cooked["compiled"] == cooked["jobs"] == 3

    report = pipeline("report", world, "--cache", cache, "--format", "json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "allowed roots" not in report.stderr
    (total,) = [r for r in json.loads(report.stdout)["totals"] if r["shader"] == "lit"]
    assert (total["required"], total["unique_sources"], total["cached"], total["missing"]) == (2, 3, 3, 0)

    explain = pipeline("explain", world, "lit/forward{DOUBLE=1}", "--cache", cache, "--json", cwd=tmp_path)
    assert explain.returncode == 0, explain.stderr
    stages = {s["stage"]: s for s in json.loads(explain.stdout)["stages"]}
    assert stages["fragment"]["state"] == stages["vertex"]["state"] == "cached"
    assert stages["fragment"]["defines"]["DOUBLE"] == "1"

    verify = pipeline("verify-family", "lit", "--world", world, "--all", "--cache", cache, "-j", "1", "--json",
                      cwd=tmp_path)
    assert verify.returncode == 0, verify.stderr
    verified = json.loads(verify.stdout)
    # the two valid keys are the two the cook compiled: verify plans the same jobs, all cached
    assert verified["failures"] == [] and verified["keys"] == 2
    assert (verified["jobs"], verified["compiled"], verified["cache_hits"]) == (3, 0, 3)


def test_verify_family_finds_the_world_of_its_working_folder(world: Path, tmp_path: Path) -> None:
    verify = pipeline("verify-family", "lit", "--all", "--cache", tmp_path / "cache", "-j", "1", "--json", cwd=world)
    assert verify.returncode == 0, verify.stderr
    assert json.loads(verify.stdout)["failures"] == []
