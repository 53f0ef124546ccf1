"""Permutation keys: evaluation, traces, dedup by signature, text/hash, defines, corpus."""

from __future__ import annotations

import hashlib

import pytest
from rules_fixtures import draw, facts, mesh, pbr, small_ruleset, texture

from pipeline.keys.defines import stage_defines
from pipeline.keys.evaluate import evaluate
from pipeline.keys.key import KeyTextError, PermutationKey
from pipeline.keys.required import optional_facts, required_keys

SAMPLE_MODELS = "glTF-Sample-Assets/Models"


def forward(uses):
    return next(u for u in uses if u.key.pass_name == "forward")


def by_pass(uses):
    return {u.key.pass_name: u for u in uses}


# ---------------------------------------------------------------- text and hash
def test_key_text_and_pinned_hash():
    key = PermutationKey("pbr", "forward", (("ALPHA_MODE", "MASK"), ("NORMAL_MAP", True), ("UV_SETS", 2)))
    assert key.text == "pbr/forward{ALPHA_MODE=MASK,NORMAL_MAP=1,UV_SETS=2}"
    expected = b'{"features":{"ALPHA_MODE":"MASK","NORMAL_MAP":true,"UV_SETS":2},"pass":"forward","shader":"pbr"}'
    assert key.hash == hashlib.sha256(expected).hexdigest()
    assert key.hash == "b0a41c2e16df708720d5dd74ce6d59507861726f815eef49560cef72a3e94d0a"
    assert key.to_json()["features"] == {"ALPHA_MODE": "MASK", "NORMAL_MAP": True, "UV_SETS": 2}


def test_parse_round_trips_every_key_of_a_draw():
    rs = pbr()
    for use in evaluate([rs], facts(mesh("NORMAL", "TEXCOORD_0"), {"normalTexture": texture(), "maxUv": 0})):
        assert PermutationKey.parse(use.key.text, [rs]) == use.key


@pytest.mark.parametrize("text, message", [
    ("pbr/forward", "not a key"),
    ("toon/forward{}", "unknown shader 'toon'"),
    ("pbr/forwrd{}", "unknown pass 'forwrd' of pbr (did you mean 'forward'?)"),
    ("pbr/depth{ALPHA_MODE=MASK}", "missing feature(s)"),
    ("pbr/depth{ALPHA_MODE=MASKK}", "'MASKK' is not a value of ALPHA_MODE"),
    ("pbr/depth{NORMAL_MAP=1}", "'NORMAL_MAP' is not a static feature of pbr/depth"),
])
def test_parse_errors(text, message):
    with pytest.raises(KeyTextError) as info:
        PermutationKey.parse(text, [pbr()])
    assert message in str(info.value)


# ---------------------------------------------------------------- pbr semantics
def test_normal_mapped_textured_draw():
    f = facts(mesh("NORMAL", "TANGENT", "TEXCOORD_0", "TEXCOORD_1"),
              {"normalTexture": texture(), "pbrMetallicRoughness": {"baseColorTexture": texture(1)}, "maxUv": 1})
    key = forward(evaluate([pbr()], f)).key
    assert key.value("NORMAL_MAP") and key.value("TANGENTS") and key.value("BASE_COLOR_MAP")
    assert key.value("UV_SETS") == 2


def test_no_normals_means_no_normal_map_and_no_tangents():
    f = facts(mesh("TANGENT", "TEXCOORD_0"), {"normalTexture": texture(), "maxUv": 0})
    key = forward(evaluate([pbr()], f)).key
    assert not key.value("NORMAL_MAP") and not key.value("TANGENTS")
    assert key.value("UV_SETS") == 0  # no map left: no UV set read


def test_unlit_drops_lighting_features_and_the_trace_says_which_rule():
    f = facts(mesh("NORMAL", "TANGENT", "TEXCOORD_0"),
              {"unlit": True, "normalTexture": texture(), "clearcoat": {"clearcoatFactor": 1.0}, "maxUv": 0,
               "pbrMetallicRoughness": {"baseColorTexture": texture()}})
    use = forward(evaluate([pbr()], f))
    assert use.key.value("UNLIT") and not use.key.value("NORMAL_MAP") and not use.key.value("CLEARCOAT")
    assert use.key.value("BASE_COLOR_MAP") and use.key.value("UV_SETS") == 1
    fired = use.trace.normalize[0]
    assert fired.when == "UNLIT" and fired.location.startswith("rules/pbr.yaml:")
    assert dict(fired.set)["NORMAL_MAP"] is False


def test_trace_names_the_derive_case_and_the_facts_it_read():
    f = facts(mesh("NORMAL", "JOINTS_0", "WEIGHTS_0", "JOINTS_1", "WEIGHTS_1"), node={"skin": True})
    use = forward(evaluate([pbr()], f))
    assert use.key.value("SKINNING") == 8
    t = use.trace.features["SKINNING"]
    assert t.case == 2 and t.location.startswith("rules/pbr.yaml:")
    assert "node.skin" in t.facts and "mesh.attributes['JOINTS_1']" in t.facts


def test_optional_fact_narrows_skinning_and_vertex_color():
    skinned = mesh("NORMAL", "JOINTS_0", "WEIGHTS_0", "JOINTS_1", "WEIGHTS_1", maxJointInfluences=3)
    assert forward(evaluate([pbr()], facts(skinned, node={"skin": True}))).key.value("SKINNING") == 4
    white = mesh("NORMAL", "COLOR_0", color="VEC3", colorAllWhite=True)
    assert forward(evaluate([pbr()], facts(white))).key.value("VERTEX_COLOR") == "NONE"
    unknown = mesh("NORMAL", "COLOR_0", color="VEC3")
    assert forward(evaluate([pbr()], facts(unknown))).key.value("VERTEX_COLOR") == "VEC3"


def test_optional_facts_lists_the_buffer_facts_read():
    assert optional_facts([pbr()]) == {"mesh.colorAllWhite", "mesh.maxJointInfluences"}


def test_blend_skips_depth_and_shadow_and_sets_render_state():
    uses = by_pass(evaluate([pbr()], facts(material={"alphaMode": "BLEND", "doubleSided": True},
                                           node={"mirrored": True})))
    assert set(uses) == {"forward"}
    state = uses["forward"].render_state
    assert state == {"blend": True, "cull": "none", "front_face": "cw", "depth_write": False, "depth_test": True}
    assert uses["forward"].specialization == {"DOUBLE_SIDED": (0, True), "SPECULAR": (1, False)}
    assert uses["forward"].dynamic == {"EMISSIVE_STRENGTH": False, "IOR": False}


def test_depth_key_of_an_opaque_draw_drops_coverage_inputs():
    f = facts(mesh("NORMAL", "TEXCOORD_0", "COLOR_0"), {"pbrMetallicRoughness": {"baseColorTexture": texture()},
                                                         "maxUv": 0})
    depth = by_pass(evaluate([pbr()], f))["depth"].key
    assert dict(depth.features) == {
        "ALPHA_MODE": "OPAQUE", "BASE_COLOR_MAP": False, "INSTANCING": False, "MORPH_NORMAL": False,
        "MORPH_TANGENT": False, "MORPH_TARGETS": 0, "SKINNING": 0, "TEXTURE_TRANSFORM": False, "UV_SETS": 0,
        "VERTEX_COLOR": "NONE"}


def test_select_picks_the_family_from_material_extras():
    assert evaluate([pbr()], facts(material={"extras": {"shader": "toon"}})) == []


# ---------------------------------------------------------------- many draws
def test_rules_run_once_per_signature():
    same = facts(mesh("NORMAL"))
    other = facts(mesh("NORMAL"), {"alphaMode": "MASK"})
    draws = [draw(same, node=i) for i in range(50)] + [draw(other, node=99)]
    result = required_keys([pbr()], draws)
    assert result.signatures_evaluated == 2
    # depth and shadow: one key per signature; forward: one per signature and SHADOWS x QUALITY combination
    assert len(result.keys) == 2 + 2 + 2 * 4
    fwd = next(k for k in result.keys if k.pass_name == "forward" and k.value("ALPHA_MODE") == "OPAQUE")
    assert len(result.keys[fwd].draws) == 50


def test_render_states_and_specialization_values_are_collected_per_key():
    a = facts(mesh("NORMAL"), {"doubleSided": True})
    b = facts(mesh("NORMAL"))
    result = required_keys([pbr()], [draw(a), draw(b)])
    info = next(i for k, i in result.keys.items() if k.pass_name == "forward")
    assert [s["cull"] for s in info.render_states] == ["back", "none"]
    assert info.specialization["DOUBLE_SIDED"] == [False, True]


def test_a_failing_rule_is_a_located_diagnostic_and_other_draws_still_evaluate():
    rs = small_ruleset({"N": {"values": [0, 1]}}, derive={"N": "mesh.vertexCount"})
    ok = facts(mesh("NORMAL", vertexCount=1))
    bad = facts(mesh("NORMAL", vertexCount=7))
    result = required_keys([rs], [draw(ok), draw(bad), draw(bad, node=2)])
    assert [str(d) for d in result.diagnostics] == [
        "test.yaml:11:6: error: N derived as 7, which is not one of its values (0, 1) "
        "for draw a.gltf#/meshes/0/primitives/0 (node 0) and 1 more draw"
    ]
    assert len(result.diagnostics) == 1 and len(result.keys) == 1


def test_no_family_is_a_warning():
    result = required_keys([pbr()], [draw(facts(material={"extras": {"shader": "toon"}}))])
    assert result.diagnostics[0].severity == "warning" and not result.keys


# ---------------------------------------------------------------- defines
def test_stage_defines_follow_the_convention():
    rs = pbr()
    f = facts(mesh("NORMAL"), {"alphaMode": "MASK", "doubleSided": True})
    uses = by_pass(evaluate([rs], f))
    fwd = dict(stage_defines(rs, uses["forward"].key))
    assert stage_defines(rs, uses["forward"].key)[0] == ("PASS_FORWARD", "1")
    assert fwd["ALPHA_MODE"] == "1" and fwd["ALPHA_MODE_MASK"] == "1" and fwd["ALPHA_MODE_BLEND"] == "2"
    assert fwd["NORMAL_MAP"] == "0" and fwd["UV_SETS"] == "0" and fwd["VERTEX_COLOR_NONE"] == "0"
    assert fwd["DOUBLE_SIDED_SPEC_ID"] == "0" and fwd["SPECULAR_SPEC_ID"] == "1"
    assert "DOUBLE_SIDED" not in fwd and "EMISSIVE_STRENGTH" not in fwd and "IOR" not in fwd
    depth = dict(stage_defines(rs, uses["depth"].key))
    assert depth["PASS_DEPTH"] == "1" and "PASS_FORWARD" not in depth
    assert depth["NORMAL_MAP"] == "0" and "DOUBLE_SIDED_SPEC_ID" not in depth
    # Written out from rules/pbr.yaml by hand: the pass macro first, then every static feature by
    # name, those of the depth key at its values (ALPHA_MODE=MASK), the rest at their defaults;
    # an enum feature follows one constant per value, its index in the domain.
    assert stage_defines(rs, uses["depth"].key) == [
        ("PASS_DEPTH", "1"),
        ("ALPHA_MODE_OPAQUE", "0"), ("ALPHA_MODE_MASK", "1"), ("ALPHA_MODE_BLEND", "2"), ("ALPHA_MODE", "1"),
        ("ANISOTROPY", "0"), ("BASE_COLOR_MAP", "0"), ("CLEARCOAT", "0"), ("EMISSIVE_MAP", "0"),
        ("INSTANCING", "0"), ("IRIDESCENCE", "0"), ("METALLIC_ROUGHNESS_MAP", "0"), ("MORPH_NORMAL", "0"),
        ("MORPH_TANGENT", "0"), ("MORPH_TARGETS", "0"), ("NORMAL_MAP", "0"), ("OCCLUSION_MAP", "0"),
        ("SHEEN", "0"), ("SKINNING", "0"), ("SPECULAR_GLOSSINESS", "0"), ("TANGENTS", "0"),
        ("TEXTURE_TRANSFORM", "0"), ("TRANSMISSION", "0"), ("UNLIT", "0"), ("UV_SETS", "0"),
        ("VERTEX_COLOR_NONE", "0"), ("VERTEX_COLOR_VEC3", "1"), ("VERTEX_COLOR_VEC4", "2"), ("VERTEX_COLOR", "0"),
        ("VOLUME", "0"),
    ]


def test_extra_defines_with_conditions():
    rs = small_ruleset({"A": {"type": "bool"}, "M": {"values": ["X", "Y"], "mode": "dynamic"}},
                       derive={"A": "material.unlit"},
                       defines={"MAX_LIGHTS": 8, "HAS_A": {"when": "A", "value": 1}},
                       passes={"main": {"features": "all", "defines": {"LATE": "1.0"}}})
    key_on = forward_key(rs, True)
    assert stage_defines(rs, key_on) == [("PASS_MAIN", "1"), ("A", "1"), ("M_X", "0"), ("M_Y", "1"),
                                         ("HAS_A", "1"), ("LATE", "1.0"), ("MAX_LIGHTS", "8")]
    assert ("HAS_A", "1") not in stage_defines(rs, forward_key(rs, False))


def forward_key(rs, unlit: bool) -> PermutationKey:
    return evaluate([rs], facts(material={"unlit": unlit}))[0].key


def test_runtime_cycle_is_a_located_error():
    # too many features for the load-time check to try: the runtime bound catches it
    features = {f"F{i}": {"values": list(range(8))} for i in range(6)}
    features["A"] = {"type": "bool"}
    normalize = [{"when": "A and F0 + F1 + F2 + F3 + F4 + F5 >= 0", "set": {"A": False}},
                 {"when": "not A and F0 + F1 + F2 + F3 + F4 + F5 >= 0", "set": {"A": True}}]
    rs = small_ruleset(features, normalize, derive={"A": "material.unlit"})
    found = evaluate([rs], facts())
    assert not found and len(found.errors) == 1
    assert "never reaches a fixed point" in str(found.errors[0]) and "test.yaml:" in str(found.errors[0])


# ---------------------------------------------------------------- corpus
@pytest.fixture(scope="module")
def corpus_keys(corpus, tmp_path_factory):
    from pipeline import api

    cache = tmp_path_factory.mktemp("cache")
    rulesets = [pbr()]

    def keys_of(model: str):
        scanned = api.scan(corpus / SAMPLE_MODELS / model, cache=cache, optional=optional_facts(rulesets))
        result = required_keys(rulesets, scanned.draws)
        assert not scanned.errors and not result.diagnostics
        return result

    return keys_of


def forward_keys(result):
    """The forward keys of the renderer's default axis values (a runtime axis at its default is not in the key)."""
    return sorted((k for k in result.keys if k.pass_name == "forward"
                   and not {"SHADOWS", "QUALITY"} & dict(k.features).keys()), key=lambda k: k.text)


def test_corpus_normal_mapped_textured_model(corpus_keys):
    result = corpus_keys("NormalTangentTest/glTF/NormalTangentTest.gltf")
    (key,) = forward_keys(result)
    assert key.value("NORMAL_MAP") and key.value("BASE_COLOR_MAP") and key.value("UV_SETS") == 1
    trace = result.keys[key].trace.features["NORMAL_MAP"]
    assert set(trace.facts) == {"material.normalTexture", "mesh.normals"}
    assert trace.location.startswith("rules/pbr.yaml:")


def test_corpus_skinned_model(corpus_keys):
    result = corpus_keys("RiggedSimple/glTF/RiggedSimple.gltf")
    (key,) = forward_keys(result)
    assert key.value("SKINNING") == 4
    assert "node.skin" in result.keys[key].trace.features["SKINNING"].facts


def test_corpus_morphing_model(corpus_keys):
    result = corpus_keys("AnimatedMorphCube/glTF/AnimatedMorphCube.gltf")
    (key,) = forward_keys(result)
    assert key.value("MORPH_TARGETS") == 2 and key.value("MORPH_NORMAL")
    assert result.keys[key].trace.features["MORPH_TARGETS"].facts == ("mesh.morphTargets",)


def test_corpus_blend_and_mask(corpus_keys):
    result = corpus_keys("AlphaBlendModeTest/glTF/AlphaBlendModeTest.gltf")
    modes = {k.value("ALPHA_MODE") for k in forward_keys(result)}
    assert modes == {"OPAQUE", "MASK", "BLEND"}
    depth_modes = {k.value("ALPHA_MODE") for k in result.keys if k.pass_name == "depth"}
    assert depth_modes == {"OPAQUE", "MASK"}
    blend = next(k for k in forward_keys(result) if k.value("ALPHA_MODE") == "BLEND")
    assert result.keys[blend].render_states[0]["blend"] is True
    assert result.keys[blend].trace.features["ALPHA_MODE"].facts == ("material.alphaMode",)


def test_corpus_material_variants(corpus_keys):
    result = corpus_keys("MaterialsVariantsShoe/glTF/MaterialsVariantsShoe.gltf")
    draws = [d for info in result.keys.values() for d in info.draws]
    assert {d.variant for d in draws} >= {"midnight", "beach"}
    assert result.signatures_evaluated < len({(d.node, d.primitive, d.variant) for d in draws}) + 1


def test_corpus_unlit_model(corpus_keys):
    result = corpus_keys("UnlitTest/glTF/UnlitTest.gltf")
    keys = forward_keys(result)
    assert keys and all(k.value("UNLIT") for k in keys)
    assert result.keys[keys[0]].trace.features["UNLIT"].facts == ("material.unlit",)


def test_keys_command_json_and_text(corpus, tmp_path):
    import json

    from click.testing import CliRunner

    from pipeline.cli import main

    world = corpus / SAMPLE_MODELS / "AlphaBlendModeTest"
    runner = CliRunner()
    result = runner.invoke(main, ["keys", str(world), "--cache", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["errors"] == []
    first = doc["keys"][0]
    assert {"key", "hash", "shader", "pass", "features", "render_state", "draws"} <= set(first)
    # each lit draw uses one forward key per runtime axis combination (SHADOWS x QUALITY)
    assert sum(k["draws"] for k in doc["keys"] if k["pass"] == "forward") == 9 * 4
    text = runner.invoke(main, ["keys", str(world), "--cache", str(tmp_path)])
    assert text.exit_code == 0 and "keys for 9 draws" in text.output
