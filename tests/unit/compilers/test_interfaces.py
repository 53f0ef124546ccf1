"""Program-level interfaces: the stages of one key linked as a GL program is linked (by name),
unused interface variables gone, unread vertex outputs gone; checked on real blobs, reflected
by SPIRV-Cross (an oracle independent of the code under test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.compilers import CompileRequest, SourceTree, compile_one, get_backend, validate
from pipeline.compilers.interfaces import by_name
from pipeline.compilers.spirv_module import INPUT, OUTPUT, Module
from pipeline.compilers.reflect import reflect
from pipeline.structs import replace
from paths import TESTS

MATERIALS = TESTS / "data" / "glpair" / "materials"
TARGET = dict(relaxed=True, auto_map=True, version="310 es")
PLAIN = (("TEXTURED", "0"), ("VERTEX_COLOR", "1"))
TEXTURED = (("TEXTURED", "1"), ("VERTEX_COLOR", "0"))


def pair(defines, target: str = "vulkan1.2", linked: bool = True) -> tuple[CompileRequest, CompileRequest]:
    vertex = CompileRequest("glpair/pair.vert", "vertex", defines=defines, target=target, **TARGET)
    fragment = CompileRequest("glpair/pair.frag", "fragment", defines=defines, target=target, **TARGET)
    if not linked:
        return vertex, fragment
    return replace(vertex, link=(fragment,)), replace(fragment, link=(vertex,))


def compiled(requests, backend: str = "capi", tree: SourceTree | None = None) -> tuple[dict, dict]:
    tree = tree or SourceTree(MATERIALS)
    outs = [compile_one(r, tree, get_backend(backend)) for r in requests]
    assert all(o.ok for o in outs), [str(d) for o in outs for d in o.errors]
    for request, out in zip(requests, outs):
        assert validate(out.spirv, request.target) == []
    return tuple(reflect(o.spirv) for o in outs)


@pytest.mark.parametrize("backend", ["capi", "cli"])
@pytest.mark.parametrize("defines", [PLAIN, TEXTURED], ids=["plain", "textured"])
def test_same_named_varyings_take_one_location(backend: str, defines) -> None:
    vertex, fragment = compiled(pair(defines), backend)
    produced = {v["name"]: v["location"] for v in vertex["outputs"]}
    consumed = {v["name"]: v["location"] for v in fragment["inputs"]}
    assert consumed.items() <= produced.items() and set(consumed) == set(produced)  # nothing left unconsumed
    ordered = sorted(produced, key=produced.get)
    assert ordered == sorted(produced)  # locations by name: v_color, v_normal, v_position, v_tangentFrame, ...
    assert produced["v_tangentFrame"] + 3 == produced.get("v_uv", produced["v_tangentFrame"] + 3)  # a mat3 takes 3


def test_unlinked_stages_disagree_which_is_what_linking_fixes() -> None:
    """glslang alone numbers each stage in declaration order: the same names get other locations."""
    vertex, fragment = compiled(pair(TEXTURED, linked=False))
    produced = {v["name"]: v["location"] for v in vertex["outputs"]}
    consumed = {v["name"]: v["location"] for v in fragment["inputs"]}
    assert any(produced[name] != location for name, location in consumed.items())


@pytest.mark.parametrize("backend", ["capi", "cli"])
def test_unread_samplers_and_varyings_are_removed_and_bindings_do_not_collide(backend: str) -> None:
    vertex, fragment = compiled(pair(PLAIN), backend)
    names = {d["name"] for r in (vertex, fragment) for d in r["descriptors"]}
    assert names == {"gl_DefaultUniformBlock"}  # u_displacementMap, u_baseColorTexture, u_emissiveTexture: unread
    assert "v_uv" not in {v["name"] for v in vertex["outputs"]}  # the plain fragment stage does not read it
    assert [d["binding"] for d in vertex["descriptors"]] == [0]
    assert [d["binding"] for d in fragment["descriptors"]] == [16]


def test_a_spirv_1_0_target_keeps_a_valid_interface() -> None:
    """Before SPIR-V 1.4 an entry point lists only inputs and outputs: a removed output leaves it."""
    vertex, fragment = compiled(pair(PLAIN, target="vulkan1.0"))
    assert "v_uv" not in {v["name"] for v in vertex["outputs"]}


def test_an_input_no_vertex_output_names_comes_after_them_all(tmp_path: Path) -> None:
    (tmp_path / "a.vert").write_text("precision highp float;\nout vec2 b_two;\nout vec4 a_one;\n"
                                     "void main() { b_two = vec2(1.0); a_one = vec4(2.0); gl_Position = a_one; }\n")
    (tmp_path / "a.frag").write_text("precision highp float;\nin vec3 z_stray;\nin vec4 a_one;\nin vec2 b_two;\n"
                                     "out vec4 c;\nvoid main() { c = a_one + vec4(b_two, z_stray.xy); }\n")
    vertex = CompileRequest("a.vert", "vertex", **TARGET)
    fragment = CompileRequest("a.frag", "fragment", **TARGET)
    (reflected,) = compiled([replace(fragment, link=(vertex,))], tree=SourceTree(tmp_path))
    assert {v["name"]: v["location"] for v in reflected["inputs"]} == {"a_one": 0, "b_two": 1, "z_stray": 2}


def test_a_partner_that_does_not_compile_fails_the_stage_naming_it(tmp_path: Path) -> None:
    (tmp_path / "bad.vert").write_text("precision highp float;\nvoid main() { gl_Position = nope; }\n")
    (tmp_path / "a.frag").write_text("precision highp float;\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n")
    fragment = CompileRequest("a.frag", "fragment", link=(CompileRequest("bad.vert", "vertex", **TARGET),), **TARGET)
    out = compile_one(fragment, SourceTree(tmp_path), get_backend("capi"))
    assert not out.ok
    assert any(d.location.file.endswith("bad.vert") and d.location.line == 2 for d in out.errors)
    assert out.errors[-1].location.file.endswith("a.frag")
    assert "the vertex stage it is linked with (bad.vert, main) does not compile" in out.errors[-1].message


def test_by_name_packs_locations_in_name_order() -> None:
    assert by_name({"b": (7, 0, 1), "a": (9, 0, 3), "c": (8, 0, 2)}, 4) == {9: 4, 7: 7, 8: 8}


def test_strict_glsl_is_left_as_glslang_wrote_it(tmp_path: Path) -> None:
    (tmp_path / "s.frag").write_text("#version 450\nlayout(location = 3) in vec4 x;\nlayout(location = 0) out vec4 c;\n"
                                     "layout(binding = 0) uniform sampler2D unread;\nvoid main() { c = x; }\n")
    request = CompileRequest("s.frag", "fragment", link=(CompileRequest("s.frag", "vertex"),))
    linked = compile_one(request, SourceTree(tmp_path), get_backend("capi"))
    plain = compile_one(replace(request, link=()), SourceTree(tmp_path), get_backend("capi"))
    assert linked.spirv == plain.spirv and Module(plain.spirv).varyings(INPUT)["x"][1] == 3
    assert Module(plain.spirv).varyings(OUTPUT)["c"][1] == 0
