"""A source generator plug-in: made with the library, asked per key, its answer checked."""

from __future__ import annotations


from pipeline.compilers import SourceTree
from pipeline.compilers.plugins import Plugins, resolve
from pipeline.keys.key import PermutationKey
from pipeline.plan.generate import GeneratedStage, generator_for
from pipeline.plan.generate.plugin import PluginGenerator
from pipeline.rules.load import load_ruleset_text
from pipeline.structs import replace
from paths import DATA

PLUGINS = DATA / "plugins"
FAMILY = load_ruleset_text("shader: t\nkind: tint\nfeatures:\n  TINT: {values: [-1, 0, 5]}\npasses: {main: {}}\n",
                           "rules/t.yaml")


def generator(attribute: str, tmp_path) -> PluginGenerator:
    ref = replace(resolve("generator", f"tint_generator.py:{attribute}", PLUGINS), name="tint")
    made = generator_for(FAMILY, SourceTree(tmp_path), Plugins(generators=(("tint", ref),)))
    assert isinstance(made, PluginGenerator)
    return made


def test_a_plugin_kind_generates_stages_carrying_its_identity(tmp_path) -> None:
    made = generator("TintGenerator", tmp_path).generate(FAMILY, PermutationKey("t", "main", (("TINT", 5),)))
    assert sorted(made) == ["fragment", "vertex"] and "vec3(0.5)" in made["fragment"].text
    assert made["vertex"].plugins[0][:2] == ("tint", "1.0")


def test_a_raise_or_garbage_fails_the_key_at_the_plugin_s_line(tmp_path) -> None:
    file = str((PLUGINS / "tint_generator.py").resolve())
    lines = (PLUGINS / "tint_generator.py").read_text().splitlines()
    raised = generator("TintGenerator", tmp_path).generate(FAMILY, PermutationKey("t", "main", (("TINT", -1),)))
    (problem,) = raised["fragment"].problems
    assert problem.message == "source generator 'tint' raised ValueError: a negative tint (-1) has no color"
    assert (problem.location.file, lines[problem.location.line - 1].strip()) == (
        file, 'raise ValueError(f"a negative tint ({tint}) has no color")')
    garbage = generator("Garbage", tmp_path).generate(FAMILY, PermutationKey("t", "main", ()))
    (problem,) = garbage["vertex"].problems
    assert problem.message == "source generator 'tint' returned str for the fragment stage, not GeneratedStage"
    assert lines[problem.location.line - 1].strip() == "def generate(self, ruleset, key):"


def test_a_kind_nobody_generates_fails_every_key_with_the_known_kinds(tmp_path) -> None:
    made = generator_for(FAMILY, SourceTree(tmp_path), Plugins()).generate(FAMILY, PermutationKey("t", "main", ()))
    (problem,) = made["fragment"].problems
    assert problem.message == "family t: no source generator for kind 'tint' (known: ubershader, fragments, materialx)"
    assert made["vertex"] == GeneratedStage(None, problems=(problem,))
