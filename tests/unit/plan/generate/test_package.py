"""The generator seam: a family's ``kind`` picks its source generator; a generated stage and an unavailable one."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from pipeline.compilers import SourceTree
from pipeline.errors import Diagnostic, Location
from pipeline.keys.key import PermutationKey
from pipeline.plan.generate import GeneratedStage, Unavailable, generator_for
from pipeline.rules.load import load_ruleset_text
from paths import REPO

PASSES = "features: {}\npasses: {main: {}}\n"


def family(kind_lines: str):
    return load_ruleset_text(f"shader: t\n{kind_lines}{PASSES}", "rules/t.yaml")


def test_a_generated_stage_defaults_to_no_files_defines_problems_or_shape() -> None:
    stage = GeneratedStage("void main() {}\n")
    assert (stage.files, stage.defines, stage.problems, stage.shape) == ((), (), (), None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stage.text = "changed"  # type: ignore[misc]
    assert GeneratedStage("x", ("a.glsl",)) == GeneratedStage("x", ("a.glsl",)) != GeneratedStage("y", ("a.glsl",))


def test_an_unavailable_generator_fails_both_stages_of_every_key_with_its_reason() -> None:
    reason = Diagnostic(Location("rules/t.yaml"), "cannot generate here")
    generator = Unavailable(reason)
    for key in (PermutationKey("t", "main", ()), PermutationKey("t", "main", (("A", 1),))):
        made = generator.generate(None, key)
        assert sorted(made) == ["fragment", "vertex"]
        assert all(stage.text is None and stage.problems == (reason,) for stage in made.values())


def test_a_fragments_family_gets_the_chain_generator_of_its_tree(tmp_path) -> None:
    from pipeline.plan.generate.chain import ChainGenerator

    tree = SourceTree(tmp_path)
    generator = generator_for(family("kind: fragments\nfragments: [a.glsl]\n"), tree)
    assert isinstance(generator, ChainGenerator) and generator.tree is tree


def test_a_materialx_family_gets_the_materialx_generator_of_its_tree(tmp_path) -> None:
    from pipeline.plan.generate.materialx import MaterialxGenerator

    tree = SourceTree(tmp_path)
    generator = generator_for(family("kind: materialx\n"), tree)
    assert isinstance(generator, MaterialxGenerator) and generator.tree is tree


def test_an_ubershader_family_has_no_generator(tmp_path) -> None:
    ubershader = family("sources: {vertex: a.vert}\n")
    with pytest.raises(ValueError, match="family t of kind ubershader has no source generator"):
        generator_for(ubershader, SourceTree(tmp_path))


PROBE = """import sys
from pathlib import Path
from pipeline.compilers import SourceTree
from pipeline.plan.generate import generator_for
from pipeline.rules.load import load_ruleset_text
rs = load_ruleset_text("shader: t\\nkind: fragments\\nfragments: [a.glsl]\\n" + sys.argv[1], "t.yaml")
generator_for(rs, SourceTree(Path(".")))
print(sorted(m for m in sys.modules if m.startswith(("MaterialX", "pipeline.plan.generate."))))
"""


def test_the_package_and_a_chain_generator_load_no_materialx(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", PROBE, PASSES], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    loaded = run.stdout.strip()
    assert "MaterialX" not in loaded and "pipeline.plan.generate.chain" in loaded, loaded
