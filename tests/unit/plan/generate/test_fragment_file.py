"""Fragment files: the ``//!`` header (stage, imports, exports) and the ``run`` signature it must match."""

from __future__ import annotations

import pytest

from pipeline.errors import CompileError
from pipeline.plan.generate.fragment_file import Port, parse_fragment


def problems(text: str) -> list[str]:
    """Every located problem of a fragment text, as ``where: message``."""
    with pytest.raises(CompileError) as caught:
        parse_fragment(text, "f.glsl", "lib/f.glsl")
    return [f"{d.location}: {d.message}" for d in caught.value.diagnostics]


def test_modes_ports_and_sink_follow_the_header() -> None:
    text = ("//! stage fragment\n//! import vec4 c, vec2 uv\n//! export vec4 c, float fog\n"
            "void run(inout vec4 c, in vec2 uv, out float fog) { fog = uv.x; }\n")
    f = parse_fragment(text, "a.glsl", "lib/a.glsl")
    assert (f.mode("c"), f.mode("uv"), f.mode("fog")) == ("inout", "in", "out")
    assert f.port("fog") == Port("float", "fog", 3, 20) and str(f.port("uv")) == "vec2 uv"
    assert not f.sink
    sink = parse_fragment("//! stage fragment\n//! import vec4 c\nvoid run(in vec4 c) {}\n", "o.glsl", "o.glsl")
    assert sink.sink and sink.exports == ()


def test_the_parameters_keep_run_s_order_and_the_body_starts_after_the_header() -> None:
    text = ("//! stage vertex\n\n// a note between header lines\n//! import vec3 a\n//! export vec3 b\n"
            "// trailing comment\n\nconst float K = 2.0;\n\n"
            "void run(out vec3 b,\n         in vec3 a)\n{ b = a * K; }\n")
    f = parse_fragment(text, "v.glsl", "v.glsl")
    assert f.params == ("b", "a"), "the order of run's parameters, not the header's"
    assert f.body_line == 8 and f.body.startswith("const float K")
    assert f.run_line == 10
    assert f.path == "v.glsl" and f.stage == "vertex"


def test_a_run_in_a_comment_does_not_count_and_a_precision_qualifier_is_accepted() -> None:
    text = ("//! stage fragment\n//! export float x\n// void run(out float y) {\n/* void run() { */\n"
            "void run(out highp float x) { x = 1.0; }\n")
    f = parse_fragment(text, "p.glsl", "p.glsl")
    assert f.params == ("x",) and f.run_line == 5


def test_a_fragment_without_a_stage_is_located_at_its_first_line() -> None:
    assert problems("//! export float x\nvoid run(out float x) {}\n") == [
        "lib/f.glsl:1:1: a fragment declares its stage: '//! stage vertex' or '//! stage fragment'"]


def test_a_second_stage_line_is_located_where_it_stands() -> None:
    shown = problems("//! stage vertex\n//!   stage fragment\nvoid run() {}\n")
    assert shown == ["lib/f.glsl:2:13: the stage is declared twice"]


def test_a_name_imported_twice_is_located_at_its_second_port() -> None:
    shown = problems("//! stage fragment\n//! import vec2 uv,  vec2 uv\nvoid run(in vec2 uv) {}\n")
    assert shown == ["lib/f.glsl:2:22: 'uv' is imported twice"]


def test_a_port_that_is_not_type_and_name_is_located_at_its_item() -> None:
    shown = problems("//! stage vertex\n//! export vec3 a, vec3\nvoid run(out vec3 a) {}\n")
    assert shown == ["lib/f.glsl:2:20: expected 'TYPE name', found 'vec3'"]


def test_run_parameters_must_be_the_header_s_names_all_of_them() -> None:
    unknown = problems("//! stage vertex\n//! export vec3 a\nvoid run(out vec3 a, in float extra) {}\n")
    assert unknown == ["lib/f.glsl:3: run parameter 'extra' is not in the header"]
    lacking = problems("//! stage vertex\n//! import vec2 t\n//! export vec3 a, float b\n\n"
                       "void run(out vec3 a) {}\n")
    assert lacking == ["lib/f.glsl:5: run lacks parameter(s) for t, b"]
    garbled = problems("//! stage vertex\n//! export vec3 a\nvoid run(out vec3 a, float) {}\n")
    assert garbled == ["lib/f.glsl:3: run parameter 'float' is not 'in|out|inout TYPE name'"]


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    shown = problems("//! stage vertex\n//! export vec3 a, vec3 a\n//! import samplerCube s\nvoid helper() {}\n")
    assert shown == ["lib/f.glsl:3:12: 'samplerCube' is not a GLSL value type",
                     "lib/f.glsl:2:20: 'a' is exported twice",
                     "lib/f.glsl:4:1: a fragment defines exactly one 'void run(...)' (found 0)"]
