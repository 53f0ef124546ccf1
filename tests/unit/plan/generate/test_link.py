"""Linking a fragment chain: resolving imports, dropping dead fragments, and the emitted text's ``#line`` map."""

from __future__ import annotations

from pipeline.compilers import CompileRequest, SourceTree, compile_one, default_backend
from pipeline.plan.generate.fragment_file import parse_fragment
from pipeline.plan.generate.link import LINE_EXTENSION, VERSION, link_chain

VERTEX = ("//! stage vertex\n//! export ivec2 id, vec2 uv\nlayout(location=0) in vec3 i;\n"
          "void run(out ivec2 id, out vec2 uv) { id = ivec2(1); uv = i.xy; gl_Position = vec4(i, 1); }\n")
OUTPUT = ("//! stage fragment\n//! import vec2 uv, ivec2 id\nlayout(location=0) out vec4 o;\n\n"
          "void run(in vec2 uv, in ivec2 id)\n{\n    o = vec4(uv, id);\n}\n")
PLAIN_VERTEX = "//! stage vertex\nvoid run() { gl_Position = vec4(0); }\n"


def chain(*files: tuple[str, str]):
    """Parsed fragments from ``(path, text)`` pairs, in chain order."""
    return [parse_fragment(text, path, path) for path, text in files]


def test_the_text_starts_with_the_version_and_the_line_extension_and_is_the_same_each_time() -> None:
    first = link_chain(chain(("m/v.glsl", VERTEX), ("m/o.glsl", OUTPUT)))
    again = link_chain(chain(("m/v.glsl", VERTEX), ("m/o.glsl", OUTPUT)))
    assert first.errors == [] and first.stages == again.stages
    for text in first.stages.values():
        assert text.split("\n")[:2] == [VERSION, LINE_EXTENSION] and text.endswith("}\n")
    assert first.files == {"vertex": ("m/v.glsl",), "fragment": ("m/o.glsl",)}


def test_interpolators_are_numbered_by_first_use_and_integers_are_flat() -> None:
    linked = link_chain(chain(("m/v.glsl", VERTEX), ("m/o.glsl", OUTPUT)))
    vert, frag = linked.stages["vertex"], linked.stages["fragment"]
    # o.glsl imports uv before id: uv takes location 0 although v.glsl exports id first
    assert "layout(location = 0) out vec2 v_uv;" in vert and "layout(location = 1) flat out ivec2 v_id;" in vert
    assert "layout(location = 0) in vec2 v_uv;" in frag and "layout(location = 1) flat in ivec2 v_id;" in frag
    assert "ivec2 _id_in = v_id;" in frag and "m_o_run(_uv_in, _id_in);" in frag


def test_run_is_renamed_after_the_file_path_and_main_calls_the_kept_fragments_in_order() -> None:
    tint = ("//! stage fragment\n//! import vec2 uv\n//! export vec3 tint\n"
            "void run(in vec2 uv, out vec3 tint) { tint = vec3(uv, 0); }\n")
    out = ("//! stage fragment\n//! import vec3 tint\nlayout(location=0) out vec4 o;\n"
           "void run(in vec3 tint) { o = vec4(tint, 1); }\n")
    linked = link_chain(chain(("v.glsl", VERTEX), ("deep/dir/tint-1.glsl", tint), ("o.glsl", out)))
    frag = linked.stages["fragment"]
    assert "void deep_dir_tint_1_run(in vec2 uv, out vec3 tint)" in frag and "void run(" not in frag
    assert frag.index("deep_dir_tint_1_run(_uv_in, _tint_0);") < frag.index("o_run(_tint_0);")
    assert "v_id" not in linked.stages["vertex"], "an export no kept fragment reads is not interpolated"


def test_a_fragment_stage_export_is_preferred_over_the_vertex_one() -> None:
    own = ("//! stage fragment\n//! export vec2 uv\nvoid run(out vec2 uv) { uv = vec2(0.5); }\n")
    linked = link_chain(chain(("v.glsl", VERTEX), ("own.glsl", own), ("o.glsl", OUTPUT)))
    frag = linked.stages["fragment"]
    assert "v_uv" not in frag and "o_run(_uv_0, _id_in);" in frag
    assert "layout(location = 0) flat in ivec2 v_id;" in frag, "only id crosses the stages now"


def test_dropping_is_transitive_and_takes_the_vertex_producer_along() -> None:
    producer = ("//! stage vertex\n//! export vec3 n\nvoid run(out vec3 n) { n = vec3(1); }\n")
    middle = ("//! stage fragment\n//! import vec3 n\n//! export float shade\n"
              "void run(in vec3 n, out float shade) { shade = n.x; }\n")
    last = ("//! stage fragment\n//! import float shade\n//! export float fog\n"
            "void run(in float shade, out float fog) { fog = shade; }\n")
    sink = "//! stage fragment\nlayout(location=0) out vec4 o;\nvoid run() { o = vec4(1); }\n"
    linked = link_chain(chain(("p.glsl", producer), ("base.glsl", PLAIN_VERTEX), ("m.glsl", middle),
                              ("l.glsl", last), ("s.glsl", sink)))
    assert linked.errors == []
    assert linked.files == {"vertex": ("base.glsl",), "fragment": ("s.glsl",)}
    assert "layout(location" not in linked.stages["vertex"]  # no interpolator: nothing kept reads n


def test_a_version_line_in_a_fragment_is_located_at_its_line() -> None:
    body = "//! stage fragment\n\nlayout(location=0) out vec4 o;\n#version 450\nvoid run() { o = vec4(1); }\n"
    linked = link_chain(chain(("v.glsl", PLAIN_VERTEX), ("o.glsl", body)))
    assert [f"{d.location}: {d.message}" for d in linked.errors] == [
        "o.glsl:4: a fragment has no #version line (the linker writes it)"]
    assert linked.stages == {}, "a chain with errors emits no text"


def test_a_chain_that_keeps_no_stage_fragment_names_the_family() -> None:
    sink = "//! stage fragment\nlayout(location=0) out vec4 o;\nvoid run() { o = vec4(1); }\n"
    linked = link_chain(chain(("o.glsl", sink)), "rules/t.yaml")
    assert [f"{d.location}: {d.message}" for d in linked.errors] == [
        "rules/t.yaml: the chain keeps no vertex-stage fragment for this key"]
    unnamed = link_chain(chain(("v.glsl", PLAIN_VERTEX)))
    assert [str(d.location) for d in unnamed.errors] == ["<chain>"]
    assert "fragment-stage" in unnamed.errors[0].message


def test_line_directives_make_glslang_name_the_fragment_file_and_line(tmp_path) -> None:
    broken = OUTPUT.replace("o = vec4(uv, id);", "o = vec4(uv, id) + undefined_thing;")  # line 7 of m/o.glsl
    linked = link_chain(chain(("m/v.glsl", VERTEX), ("m/o.glsl", broken)))
    tree = SourceTree(tmp_path)
    out = compile_one(CompileRequest("generated/t.frag", "fragment", text=linked.stages["fragment"]), tree,
                      default_backend())
    assert not out.ok
    (error,) = out.errors
    assert (error.location.file, error.location.line) == (tree.name("m/o.glsl"), 7)
    assert "undefined_thing" in error.message
    vertex = compile_one(CompileRequest("generated/t.vert", "vertex", text=linked.stages["vertex"]), tree,
                         default_backend())
    assert vertex.ok, vertex.diagnostics


def test_a_linked_chain_compiles_as_glsl_es_with_its_varyings_linked_by_name(tmp_path) -> None:
    linked = link_chain(chain(("m/v.glsl", VERTEX), ("m/o.glsl", OUTPUT)))
    tree = SourceTree(tmp_path)
    texts = {}
    for stage, suffix in (("vertex", "vert"), ("fragment", "frag")):
        request = CompileRequest(f"generated/t.{suffix}", stage, text=linked.stages[stage], target="webgl2")
        out = compile_one(request, tree, default_backend())
        assert out.ok, out.diagnostics
        texts[stage] = out.spirv.decode()
    assert texts["fragment"].startswith("#version 300 es\nprecision highp float;\nprecision highp int;\n")
    assert "\nin vec2 v_uv;\nflat in ivec2 v_id;\n" in texts["fragment"]
    assert "\nout vec2 v_uv;\nflat out ivec2 v_id;\n" in texts["vertex"]
    assert "layout(location = 0) in vec3 i;" in texts["vertex"]  # vertex inputs keep their locations
