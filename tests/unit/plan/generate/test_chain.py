"""The ``fragments`` generator: a key's fragment selection, its linked stages, their defines and closure."""

from __future__ import annotations

from pathlib import Path

from pipeline.compilers import SourceTree
from pipeline.keys.key import PermutationKey
from pipeline.plan.generate import chain as chain_module
from pipeline.plan.generate.chain import ChainGenerator
from pipeline.rules.load import load_ruleset_text

VERTEX = ("//! stage vertex\n//! export vec2 uv\nlayout(location=0) in vec3 i;\n"
          "void run(out vec2 uv) { uv = i.xy * SCALE; gl_Position = vec4(i, 1); }\n")
FOG = ("//! stage fragment\n//! import vec4 c\n//! export vec4 c\n"
       "void run(inout vec4 c) { c.rgb *= FOG_DENSITY; }\n")
OUTPUT = ('//! stage fragment\n//! import vec2 uv\n#include "lib/tone.glsl"\nlayout(location=0) out vec4 o;\n'
          "void run(in vec2 uv) { o = vec4(tone(vec3(uv, 0)), 1); }\n")
COLOUR = ("//! stage fragment\n//! import vec2 uv\n//! export vec4 c\n"
          "void run(in vec2 uv, out vec4 c) { c = vec4(uv, 0, 1); }\n")
SINK = '//! stage fragment\n//! import vec4 c\nlayout(location=0) out vec4 o;\nvoid run(in vec4 c) { o = c; }\n'
FAMILY = """shader: t
kind: fragments
features:
  FOG: {type: bool}
  FOG_DENSITY: {values: [1, 2]}
  SCALE: {values: [1, 3]}
  EXPOSURE: {values: [1, 5]}
  UNUSED: {values: [0, 7]}
fragments:
  - v.glsl
  - colour.glsl
  - {file: fog.glsl, when: FOG}
  - sink.glsl
passes: {main: {}}
"""


def world(folder: Path, **files: str):
    """A materials folder with the family's fragments (``files`` replace or add some) and the family."""
    texts = {"v.glsl": VERTEX, "colour.glsl": COLOUR, "fog.glsl": FOG, "sink.glsl": SINK,
             "lib/tone.glsl": "vec3 tone(vec3 c) { return c * EXPOSURE; }\n"} | files
    for name, text in texts.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    family = load_ruleset_text(FAMILY, "rules/t.yaml", materials_dir=folder)
    return family, SourceTree(folder)


def key(family, **values) -> PermutationKey:
    features = {"FOG": False, "FOG_DENSITY": 1, "SCALE": 1, "EXPOSURE": 1, "UNUSED": 0} | values
    text = ",".join(f"{n}={int(v)}" for n, v in sorted(features.items()))
    return PermutationKey.parse(f"t/main{{{text}}}", [family])


def test_a_fragment_is_selected_by_its_condition(tmp_path: Path) -> None:
    family, tree = world(tmp_path)
    generator = ChainGenerator(tree)
    assert generator.selected(family, key(family)) == ["v.glsl", "colour.glsl", "sink.glsl"]
    assert generator.selected(family, key(family, FOG=True)) == ["v.glsl", "colour.glsl", "fog.glsl", "sink.glsl"]
    unset = PermutationKey("t", "main", ())  # a feature the key does not name takes its default (false)
    assert "fog.glsl" not in generator.selected(family, unset)


def test_each_stage_gets_only_the_defines_its_text_reads(tmp_path: Path) -> None:
    family, tree = world(tmp_path)
    made = ChainGenerator(tree).generate(family, key(family, FOG=True, FOG_DENSITY=2, SCALE=3, UNUSED=7))
    assert made["vertex"].defines == (("SCALE", "3"),)
    assert made["fragment"].defines == (("FOG_DENSITY", "2"),)
    assert made["vertex"].problems == () and made["vertex"].shape is None
    plain = ChainGenerator(tree).generate(family, key(family, FOG=False, FOG_DENSITY=2))
    assert plain["fragment"].defines == (), "the fog fragment is not selected: its define goes with it"


def test_a_define_read_only_by_an_included_file_reaches_the_stage_and_the_file_joins_the_closure(
        tmp_path: Path) -> None:
    family, tree = world(tmp_path, **{"sink.glsl": OUTPUT, "colour.glsl": VERTEX.replace("SCALE", "1.0")})
    family = load_ruleset_text(FAMILY.replace("  - colour.glsl\n", ""), "rules/t.yaml", materials_dir=tmp_path)
    made = ChainGenerator(tree).generate(family, key(family, EXPOSURE=5))
    assert made["fragment"].files == ("lib/tone.glsl", "sink.glsl")
    assert made["fragment"].defines == (("EXPOSURE", "5"),)
    assert made["vertex"].files == ("v.glsl",)
    assert "EXPOSURE" not in made["fragment"].text, "the included file is not pasted into the text"


def test_a_bad_fragment_fails_both_stages_with_its_located_problems(tmp_path: Path) -> None:
    family, tree = world(tmp_path, **{"fog.glsl": "//! stage geometry\nvoid run() {}\n",
                                      "sink.glsl": "//! stage fragment\nvoid helper() {}\n"})
    made = ChainGenerator(tree).generate(family, key(family, FOG=True))
    assert made["vertex"] == made["fragment"] and made["fragment"].text is None
    assert [str(p.location) for p in made["fragment"].problems] == [tree.name("fog.glsl") + ":1:11",
                                                                    tree.name("sink.glsl") + ":2:1"]
    assert made["fragment"].files == ("colour.glsl", "fog.glsl", "sink.glsl", "v.glsl")
    fine = ChainGenerator(tree).generate(family, key(family, FOG=False))
    assert fine["fragment"].problems != () and fine["fragment"].text is None  # sink.glsl is selected always


def test_a_link_error_fails_the_key_located_in_the_fragment(tmp_path: Path) -> None:
    family, tree = world(tmp_path, **{"colour.glsl": COLOUR.replace("vec2 uv", "vec3 uv")})
    made = ChainGenerator(tree).generate(family, key(family))
    (problem,) = made["fragment"].problems
    assert str(problem.location) == tree.name("colour.glsl") + ":2:12"
    assert problem.message.startswith("type clash: import 'vec3 uv' meets export 'vec2 uv'")
    assert made["vertex"].text is None


def test_a_fragment_is_parsed_once_per_content(tmp_path: Path, monkeypatch) -> None:
    family, tree = world(tmp_path)
    parsed: list[str] = []
    real = chain_module.parse_fragment

    def counting(text, path, display):
        parsed.append(path)
        return real(text, path, display)

    monkeypatch.setattr(chain_module, "parse_fragment", counting)
    generator = ChainGenerator(tree)
    generator.generate(family, key(family))
    generator.generate(family, key(family, SCALE=3))
    assert sorted(parsed) == ["colour.glsl", "sink.glsl", "v.glsl"]
    (tmp_path / "sink.glsl").write_text(SINK.replace("o = c;", "o = c * 2.0;  // brighter"))
    made = generator.generate(family, key(family))
    assert parsed.count("sink.glsl") == 2 and "c * 2.0" in made["fragment"].text


def test_a_bad_fragment_stays_bad_until_it_changes(tmp_path: Path) -> None:
    family, tree = world(tmp_path, **{"sink.glsl": "//! stage fragment\nvoid helper() {}\n"})
    generator = ChainGenerator(tree)
    first = generator.generate(family, key(family))
    assert first == generator.generate(family, key(family)), "a remembered parse error is raised again"
    (tmp_path / "sink.glsl").write_text(SINK)
    fixed = generator.generate(family, key(family))
    assert fixed["fragment"].problems == () and fixed["fragment"].text is not None
