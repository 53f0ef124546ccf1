"""Program-level interfaces end to end: a GL-era GLSL pair (loose uniforms, unread samplers,
varyings in another order in each stage) cooked for relaxed Vulkan 1.2 with ``auto_map``, and a
studio-style HLSL family (``register(b0)``, ``register(t0)``, ``register(s0)``): ``pipeline runtime
check`` creates every pipeline state on lavapipe with the validation layer on, and says nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from family_worlds import triangle_world
from runtime_helpers import needs_egl, needs_vulkan

from pipeline.cli import main
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader
from pipeline.outputs.reflection import reflect
from paths import TESTS

pytestmark = needs_vulkan
GLPAIR = TESTS / "data" / "glpair"
HLSL = TESTS / "data" / "hlsl"
TEXTURED = {"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}
MATERIALS = [({"name": "plain"}, ()), ({"name": "textured", **TEXTURED}, ("TEXCOORD_0",)),
             ({"name": "colored"}, ("COLOR_0",)), ({"name": "both", **TEXTURED}, ("TEXCOORD_0", "COLOR_0")),
             ({"name": "masked", "alphaMode": "MASK", **TEXTURED}, ("TEXCOORD_0",))]


def cook_and_check(world: Path, out: Path, cache: Path) -> tuple[dict, list[mf.ChunkManifest]]:
    cooked = CliRunner().invoke(main, ["cook", str(world), "--out", str(out), "--cache", str(cache)])
    assert cooked.exit_code == 0, cooked.output
    run = CliRunner().invoke(main, ["runtime", "check", str(out), "--json"])
    manifests = [mf.load_chunk_manifest(p) for p in out.rglob("*.json") if ".level." not in p.name]
    return json.loads(run.stdout) | {"exit_code": run.exit_code}, manifests


@needs_egl
def test_gl_era_pair_makes_every_pipeline_state_on_lavapipe(tmp_path: Path) -> None:
    world = triangle_world(tmp_path / "world", GLPAIR / "rules", GLPAIR / "materials", MATERIALS)
    report, manifests = cook_and_check(world, tmp_path / "out", tmp_path / "cache")
    states = {pid for m in manifests for pid in m.pipelines}
    assert len({text for m in manifests for text in m.keys}) == 4  # TEXTURED x VERTEX_COLOR
    assert report["validation_errors"] == [] and report["failed"] == []
    assert report["pipelines"] == report["created"] == len(states) == 4 and report["exit_code"] == 0
    pak = PakReader(mf.library_path(tmp_path / "out"))
    for entry in (e for m in manifests for e in m.keys.values()):
        vertex, fragment = (reflect(pak.get(entry.stages[s])) for s in ("vertex", "fragment"))
        produced = {v["name"]: v["location"] for v in vertex["outputs"]}
        assert {v["name"]: v["location"] for v in fragment["inputs"]}.items() <= produced.items()
        bindings = [(d["set"], d["binding"]) for r in (vertex, fragment) for d in r["descriptors"]]
        assert len(bindings) == len(set(bindings))  # every resource its own binding, unread samplers gone
        names = {d["name"] for r in (vertex, fragment) for d in r["descriptors"]}
        assert not names & {"u_displacementMap", "u_emissiveTexture"}
        assert all(d["binding"] >= 16 for d in fragment["descriptors"])  # the fragment stage's base
    assert {t for m in manifests for e in m.keys.values() for t in e.targets} == {"vulkan1.2-relaxed", "webgl2"}
    (gl,) = report["targets"]  # the same family's GLSL ES programs, linked by Mesa's GL driver through EGL
    assert (gl["target"], gl["programs"], gl["created"], gl["failed"]) == ("webgl2", 4, 4, [])


def test_studio_hlsl_registers_make_every_pipeline_state_on_lavapipe(tmp_path: Path) -> None:
    world = triangle_world(tmp_path / "world", HLSL / "studio_rules", HLSL,
                           [(m, ("TEXCOORD_0", *extra)) for m, extra in MATERIALS])
    report, manifests = cook_and_check(world, tmp_path / "out", tmp_path / "cache")
    states = {pid for m in manifests for pid in m.pipelines}
    assert report["validation_errors"] == [] and report["failed"] == []
    assert report["pipelines"] == report["created"] == len(states) == 3 and report["exit_code"] == 0
    pak = PakReader(mf.library_path(tmp_path / "out"))
    textured = next(e for m in manifests for text, e in m.keys.items() if "TEXTURED=1" in text)
    found = {d["name"]: (d["kind"], d["binding"]) for d in reflect(pak.get(textured.stages["fragment"]))["descriptors"]}
    assert found["PerFrame"][1] == 0 and found["baseColorMap"] == ("sampled_image", 32)
    assert found["linearSampler"] == ("sampler", 64)  # b0, t0, s0: three bindings (the default shifts)


@pytest.mark.parametrize("registers,expected", [("{b = 0, t = 8, s = 16}", (8, 16))])
def test_register_shifts_are_configurable_per_target(tmp_path: Path, registers: str, expected: tuple) -> None:
    toml = f'[cook.compile]\nstudio = {{target = "vulkan1.2", registers = {registers}}}\n'
    world = triangle_world(tmp_path / "world", HLSL / "studio_rules", HLSL, [MATERIALS[1][:1] + (("TEXCOORD_0",),)],
                           toml)
    report, manifests = cook_and_check(world, tmp_path / "out", tmp_path / "cache")
    assert report["created"] == report["pipelines"] == 1 and report["validation_errors"] == []
    pak = PakReader(mf.library_path(tmp_path / "out"))
    (entry,) = manifests[0].keys.values()
    found = {d["name"]: d["binding"] for d in reflect(pak.get(entry.stages["fragment"]))["descriptors"]}
    assert (found["baseColorMap"], found["linearSampler"]) == expected
