"""Fragment-chain families (kind: fragments): the header, the linker, jobs, and the real compiler.

The chain family of the sample world (rules/chain.yaml, materials/chain/) and small
chains written here; compiles go through glslang and spirv-val.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import api
from pipeline.builtin import builtin_materials_dir, builtin_rules_dir
from pipeline.compilers import SourceTree, compile_one, default_backend
from pipeline.plan.generate.chain import ChainGenerator
from pipeline.plan.generate.fragment_file import parse_fragment
from pipeline.plan.generate.link import link_chain
from pipeline.plan.jobs import JobOptions, plan_jobs
from pipeline.outputs.manifest import load_chunk_manifest
from pipeline.errors import CompileError
from pipeline.keys.key import PermutationKey
from pipeline.rules.load import load_ruleset_text, load_rulesets
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"


@pytest.fixture(scope="module")
def builtin():
    families = {rs.shader: rs for rs in load_rulesets(builtin_rules_dir(), materials_dir=builtin_materials_dir())}
    return families, SourceTree(builtin_materials_dir())


def chain_key(families, base=0, directional=0, point=0, spot=0) -> PermutationKey:
    text = (f"chain/forward{{BASE_COLOR_MAP={base},LIGHTS_DIRECTIONAL={directional},LIGHTS_POINT={point},"
            f"LIGHTS_SPOT={spot}}}")
    return PermutationKey.parse(text, families.values())


def write(folder: Path, files: dict[str, str]) -> SourceTree:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return SourceTree(folder)


def fragments(tree: SourceTree, *names: str):
    return [parse_fragment(tree.read(n), n, tree.name(n)) for n in names]


# ------------------------------------------------------------------ the header
@pytest.mark.parametrize("text, where, message", [
    ("//! stage geometry\nvoid run() {}\n", "f.glsl:1:11", "unknown stage 'geometry'"),
    ("//! stage vertex\n//! export vec3 a, sampler2D t\nvoid run(out vec3 a) {}\n", "f.glsl:2:20",
     "'sampler2D' is not a GLSL value type"),
    ("//! stage vertex\n//! export vec3 a\nvoid run(out vec4 a) {}\n", "f.glsl:3",
     "should be 'out vec3 a'"),
    ("//! stage vertex\n//! import vec3 a\n//! export vec4 a\nvoid run(inout vec3 a) {}\n", "f.glsl:3:12",
     "'a' is imported as vec3 and exported as vec4"),
    ("//! stage fragment\n//! export float x\nvoid helper() {}\n", "f.glsl:3:1", "exactly one 'void run(...)'"),
    ("//! stage fragment\n//! colour red\nvoid run() {}\n", "f.glsl:2:5", "unknown header entry 'colour'"),
])
def test_a_bad_header_is_a_located_error(text, where, message) -> None:
    with pytest.raises(CompileError) as caught:
        parse_fragment(text, "f.glsl", "f.glsl")
    first = caught.value.diagnostics[0]
    assert str(first.location) == where and message in first.message


def test_the_header_reads_stage_ports_and_the_run_line() -> None:
    text = "//! stage fragment\n//! import vec2 uv\n// a comment\n//! export vec4 colour\n\nvoid run(in vec2 uv, out vec4 colour)\n{ colour = vec4(uv, 0, 1); }\n"
    f = parse_fragment(text, "a/b.glsl", "materials/a/b.glsl")
    assert (f.stage, [str(p) for p in f.imports], [str(p) for p in f.exports]) == ("fragment", ["vec2 uv"], ["vec4 colour"])
    assert (f.body_line, f.run_line, f.params) == (6, 6, ("uv", "colour"))


# ------------------------------------------------------------------ linking
def test_imports_resolve_to_the_nearest_earlier_export_and_cross_stages_through_interpolators(tmp_path) -> None:
    tree = write(tmp_path, {
        "v.glsl": "//! stage vertex\n//! export vec3 p, vec2 uv\nlayout(location=0) in vec3 i;\n"
                  "void run(out vec3 p, out vec2 uv) { p = i; uv = i.xy; gl_Position = vec4(i, 1); }\n",
        "c1.glsl": "//! stage fragment\n//! export vec4 c\nvoid run(out vec4 c) { c = vec4(1); }\n",
        "c2.glsl": "//! stage fragment\n//! import vec4 c, vec2 uv\n//! export vec4 c\n"
                   "void run(inout vec4 c, in vec2 uv) { c.xy *= uv; }\n",
        "o.glsl": "//! stage fragment\n//! import vec4 c\nlayout(location=0) out vec4 o;\nvoid run(in vec4 c) { o = c; }\n",
    })
    linked = link_chain(fragments(tree, "v.glsl", "c1.glsl", "c2.glsl", "o.glsl"))
    assert linked.errors == []
    vert, frag = linked.stages["vertex"], linked.stages["fragment"]
    assert "layout(location = 0) out vec2 v_uv;" in vert and "v_uv = _uv_0;" in vert
    assert "layout(location = 0) in vec2 v_uv;" in frag
    assert "v_p" not in vert, "an export nobody reads gets no interpolator"
    # c2 updates c1's colour in place and the output reads that, the nearest earlier export
    assert "c1_run(_c_0);" in frag and "c2_run(_c_0, _uv_in);" in frag and "o_run(_c_0);" in frag
    backend = default_backend()
    for stage, text in linked.stages.items():
        from pipeline.compilers import CompileRequest
        out = compile_one(CompileRequest(f"generated/t.{stage[:4]}", stage, text=text), tree, backend)
        assert out.ok, out.diagnostics


def test_a_fragment_whose_exports_nobody_reads_is_dropped(tmp_path) -> None:
    tree = write(tmp_path, {
        "v.glsl": "//! stage vertex\nlayout(location=0) in vec3 i;\nvoid run() { gl_Position = vec4(i, 1); }\n",
        "unused.glsl": "//! stage fragment\n//! export float fog\nfloat fogHelper() { return 1.0; }\n"
                       "void run(out float fog) { fog = fogHelper(); }\n",
        "o.glsl": "//! stage fragment\nlayout(location=0) out vec4 o;\nvoid run() { o = vec4(1); }\n",
    })
    linked = link_chain(fragments(tree, "v.glsl", "unused.glsl", "o.glsl"))
    assert linked.errors == [] and "fogHelper" not in linked.stages["fragment"]
    assert linked.files == {"vertex": ("v.glsl",), "fragment": ("o.glsl",)}


def test_a_missing_import_and_a_type_clash_are_located_in_the_fragment(tmp_path) -> None:
    tree = write(tmp_path, {
        "v.glsl": "//! stage vertex\n//! export vec3 n\nvoid run(out vec3 n) { n = vec3(0); gl_Position = vec4(0); }\n",
        "a.glsl": "//! stage fragment\n//! import vec2 n, float missing\nlayout(location=0) out vec4 o;\n"
                  "void run(in vec2 n, in float missing) { o = vec4(n, missing, 1); }\n",
    })
    linked = link_chain(fragments(tree, "v.glsl", "a.glsl"))
    shown = [f"{d.location}: {d.message}" for d in linked.errors]
    at = tree.named_root  # files are named by their absolute paths
    assert shown == [f"{at}a.glsl:2:12: type clash: import 'vec2 n' meets export 'vec3 n' of {at}v.glsl:2",
                     f"{at}a.glsl:2:20: missing import: no earlier fragment exports 'float missing'"]


# ------------------------------------------------------------------ the chain family: selection, lights, jobs
def test_one_lighting_fragment_per_light_type_present(builtin) -> None:
    families, tree = builtin
    generator = ChainGenerator(tree)
    chosen = generator.selected(families["chain"], chain_key(families, 1, directional=1, point=2))
    assert "chain/light_directional.glsl" in chosen and "chain/light_point.glsl" in chosen
    assert "chain/light_spot.glsl" not in chosen and "chain/base_color_map.glsl" in chosen
    stages = generator.generate(families["chain"], chain_key(families, 0, point=4))
    assert ("LIGHTS_POINT", "4") in stages["fragment"].defines
    assert all(name != "LIGHTS_SPOT" for name, _ in stages["fragment"].defines), "defines no fragment reads go"
    assert "v_uv" not in stages["vertex"].text, "no base colour map: the UV export is not interpolated"


def test_keys_that_generate_the_same_text_are_one_job(builtin) -> None:
    families, tree = builtin
    keys = [chain_key(families, 0, point=1), chain_key(families, 0, point=2), chain_key(families, 0, spot=4)]
    plan = plan_jobs(keys, families, tree, JobOptions(compiler="test"))
    report = plan.stage_report()
    # the vertex text depends only on the interpolators: the same for all three keys
    assert report["vertex"] == {"uses": 3, "jobs": 1, "max_shared": 3}
    assert report["fragment"]["jobs"] == 3


def test_a_family_feature_no_fragment_reads_makes_no_new_job(tmp_path) -> None:
    tree = write(tmp_path, {
        "v.glsl": "//! stage vertex\nlayout(location=0) in vec3 i;\nvoid run() { gl_Position = vec4(i, 1); }\n",
        "o.glsl": "//! stage fragment\nlayout(location=0) out vec4 o;\nvoid run() { o = vec4(1); }\n",
    })
    rs = load_ruleset_text("shader: t\nkind: fragments\nfeatures: {FOG: {type: bool}}\n"
                           "fragments: [v.glsl, o.glsl]\npasses: {main: {}}\n", "t.yaml", materials_dir=tmp_path)
    keys = [PermutationKey.parse(f"t/main{{FOG={v}}}", [rs]) for v in (0, 1)]
    plan = plan_jobs(keys, {"t": rs}, tree, JobOptions(compiler="test"))
    assert plan.stage_uses == 4 and len(plan.jobs) == 2


def test_a_rule_set_of_kind_fragments_needs_its_chain_and_no_sources() -> None:
    from pipeline.errors import RuleError
    with pytest.raises(RuleError, match="needs 'fragments'"):
        load_ruleset_text("shader: t\nkind: fragments\nfeatures: {}\npasses: {main: {}}\n", "t.yaml")
    with pytest.raises(RuleError, match="'sources' is for ubershader"):
        load_ruleset_text("shader: t\nkind: fragments\nsources: {vertex: a.vert}\nfragments: [a.glsl]\n"
                          "features: {}\npasses: {main: {}}\n", "t.yaml")


# ------------------------------------------------------------------ end to end
def test_the_workshop_chunk_cooks_with_the_real_compiler(tmp_path) -> None:
    world = api.open_world(SAMPLE)
    result = api.cook(world, chunk="town/workshop", cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    assert result.ok, result.errors
    manifest = load_chunk_manifest(tmp_path / "out" / "town" / "workshop.json")
    chain = sorted(k for k in manifest.keys if k.startswith("chain/"))
    assert chain == ["chain/forward{BASE_COLOR_MAP=0,LIGHTS_DIRECTIONAL=1,LIGHTS_POINT=2,LIGHTS_SPOT=1}",
                     "chain/forward{BASE_COLOR_MAP=1,LIGHTS_DIRECTIONAL=1,LIGHTS_POINT=2,LIGHTS_SPOT=1}"]
    sources = {job.request.source for job in result.plan.jobs.values()}
    assert all(s.startswith("generated/") for s in sources) and len(sources) == 4


def test_a_generated_family_compiles_for_each_of_its_targets(tmp_path) -> None:
    import shutil

    world = tmp_path / "world"
    shutil.copytree(SAMPLE, world)
    with (world / "pipeline.toml").open("a") as toml:
        toml.write('[cook.compile]\nchain = ["vulkan1.3", {target = "vulkan1.0", auto_map = true}]\n')
    result = api.cook(world, chunk="town/workshop", cache=tmp_path / "cache", out=tmp_path / "out", jobs=1)
    assert result.ok, result.errors
    manifest = load_chunk_manifest(tmp_path / "out" / "town" / "workshop.json")
    chain = [entry for text, entry in manifest.keys.items() if text.startswith("chain/")]
    assert len(chain) == 2
    for entry in chain:
        assert sorted(entry.targets) == ["vulkan1.0", "vulkan1.3"]
        assert all(set(blobs) == {"vertex", "fragment"} for blobs in entry.targets.values())
        assert entry.stages == entry.targets["vulkan1.3"] != entry.targets["vulkan1.0"]  # the first one listed
    generated = [job.request for job in result.plan.jobs.values() if job.request.source.startswith("generated/")]
    assert {(r.target, r.auto_map) for r in generated} == {("vulkan1.3", False), ("vulkan1.0", True)}
    assert len(generated) == 2 * 4  # the same four texts, once per target


def test_verify_family_compiles_the_chains_whole_valid_space(tmp_path) -> None:
    from click.testing import CliRunner

    from pipeline.cli import main
    run = CliRunner().invoke(main, ["verify-family", "chain", "--all", "--cache", str(tmp_path / "cache"), "-q"])
    assert run.exit_code == 0, run.output
    assert "128 keys -> " in run.output and "; ok" in run.output


def test_a_fragment_may_include_a_library_file_which_joins_the_closure(tmp_path) -> None:
    tree = write(tmp_path, {
        "lib/tone.glsl": "vec3 tone(vec3 c) { return c * EXPOSURE; }\n",
        "v.glsl": "//! stage vertex\nlayout(location=0) in vec3 i;\nvoid run() { gl_Position = vec4(i, 1); }\n",
        "o.glsl": '//! stage fragment\n#include "lib/tone.glsl"\nlayout(location=0) out vec4 o;\n'
                  "void run() { o = vec4(tone(vec3(1)), 1); }\n",
    })
    rs = load_ruleset_text("shader: t\nkind: fragments\nfeatures: {EXPOSURE: {values: [1, 2]}}\n"
                           "fragments: [v.glsl, o.glsl]\npasses: {main: {}}\n", "t.yaml", materials_dir=tmp_path)
    key = PermutationKey.parse("t/main{EXPOSURE=2}", [rs])
    plan = plan_jobs([key], {"t": rs}, tree, JobOptions(compiler="test"))
    (frag,) = [j for j in plan.jobs.values() if j.request.stage == "fragment"]
    assert [f for f, _ in frag.closure] == ["lib/tone.glsl", "o.glsl"]
    assert frag.request.defines == (("EXPOSURE", "2"),)
    out = compile_one(frag.request, tree, default_backend())
    assert out.ok, out.diagnostics


def test_an_ubershader_reads_the_light_setup_as_defines(tmp_path) -> None:
    """The same scene facts, bucketed by a rule set, reach an ubershader as LIGHTS_<TYPE>=<count>."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "lit.yaml").write_text(
        "shader: lit\nsources: {vertex: lit.vert, fragment: lit.frag}\nselect: material.extras.shader == 'chain'\n"
        "features:\n  LIGHTS_POINT: {values: [0, 1, 2, 4]}\n  LIGHTS_SPOT: {values: [0, 1, 2, 4]}\n"
        "derive:\n  LIGHTS_POINT: bucket(scene.lights.point, [0, 1, 2, 4])\n"
        "  LIGHTS_SPOT: bucket(scene.lights.spot, [0, 1, 2, 4])\npasses: {forward: {}}\n")
    tree = write(tmp_path / "materials", {
        "lit.vert": "#version 450\nlayout(location=0) in vec3 p;\nvoid main() { gl_Position = vec4(p, 1); }\n",
        "lit.frag": "#version 450\nlayout(location=0) out vec4 o;\n#if LIGHTS_POINT > 0 || LIGHTS_SPOT > 0\n"
                    "void main() { o = vec4(float(LIGHTS_POINT), float(LIGHTS_SPOT), 0, 1); }\n#endif\n"})
    world = api.open_world(SAMPLE, rules=tmp_path / "rules", materials=tmp_path / "materials")
    found = api.keys(world, chunk="town/workshop", cache=tmp_path / "cache")
    assert [k.text for k in found.required.keys] == ["lit/forward{LIGHTS_POINT=2,LIGHTS_SPOT=1}"]
    plan = plan_jobs(found.required.keys, world.families, tree, JobOptions(compiler="test"))
    (frag,) = [j for j in plan.jobs.values() if j.request.stage == "fragment"]
    assert frag.request.defines == (("LIGHTS_POINT", "2"), ("LIGHTS_SPOT", "1"))
    assert compile_one(frag.request, tree, default_backend()).ok
