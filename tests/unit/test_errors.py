"""Located errors: one bounded line each, one JSON shape read back as it was written."""

from __future__ import annotations

from pipeline.errors import (
    MAX_MESSAGE,
    CookDiagnostic,
    Diagnostic,
    GltfError,
    Location,
    PipelineError,
    keys_broken,
    one_line,
)


def test_a_location_prints_as_file_line_col_or_pointer() -> None:
    assert str(Location("a.yaml", 3, 7)) == "a.yaml:3:7"
    assert str(Location("a.yaml", 3)) == "a.yaml:3"
    assert str(Location("a.gltf", pointer="/meshes/0")) == "a.gltf: /meshes/0"
    assert str(Location("a.gltf", pointer="")) == "a.gltf: /"
    assert str(Location.argument("chunk")) == "chunk" and Location.argument("chunk").parameter


def test_an_error_is_one_line_per_diagnostic() -> None:
    error = PipelineError([Diagnostic(Location("a.yaml", 1, 2), "first"),
                           Diagnostic(Location("b.yaml", 3, 4), "second", "warning")])
    assert str(error) == "a.yaml:1:2: error: first\nb.yaml:3:4: warning: second"
    assert str(GltfError.at("x.glb", "bad", pointer="/nodes/1")) == "x.glb: /nodes/1: error: bad"
    assert str(PipelineError.of_argument("level", "no level 'x'")) == "level: error: no level 'x'"


def test_control_characters_and_long_texts_stay_on_one_bounded_line() -> None:
    diagnostic = Diagnostic(Location("dir\nname/a.gltf"), "line one\nline two" + "x" * 2 * MAX_MESSAGE)
    text = str(diagnostic)
    assert "\n" not in text and text.startswith("dir\\nname/a.gltf: error: line one\\nline two")
    assert len(diagnostic.message) < MAX_MESSAGE + 40 and "characters]..." in diagnostic.message
    assert one_line("short") == "short"


def test_json_reads_back_to_the_same_diagnostic() -> None:
    for diagnostic in (Diagnostic(Location("a.yaml", 1, 2), "m"), Diagnostic(Location("a.gltf", pointer="/x"), "m", "warning")):
        doc = diagnostic.to_json()
        assert set(doc) == {"file", "line", "col", "pointer", "severity", "message"}
        assert Diagnostic.from_json(doc) == diagnostic


def test_a_compile_error_names_the_keys_it_breaks() -> None:
    one = CookDiagnostic(Location("m/a.frag", 4, 1), "syntax error", key="pbr/forward{A=1}", keys=("pbr/forward{A=1}",))
    many = CookDiagnostic(Location("m/a.frag", 4, 1), "syntax error", key="k1", keys=("k1", "k2", "k3"), jobs=("j",))
    assert str(one) == "m/a.frag:4:1: error: syntax error (key pbr/forward{A=1})"
    assert str(many) == "m/a.frag:4:1: error: syntax error (breaks 3 keys, e.g. k1)"
    assert many.to_json()["keys"] == ["k1", "k2", "k3"] and many.to_json()["count"] == 3
    assert keys_broken(None, 0) == ""
