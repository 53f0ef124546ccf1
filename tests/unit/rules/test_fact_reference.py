"""docs/own-ubershader.md stays complete: its fact reference is the generated one, and it
names every field of the rule language, every emit style and every compile target.

Regenerate the fact table (after a change to pipeline/facts.py) with
``PIPELINE_REPIN=1 python3 -m pytest tests/unit/rules/test_fact_reference.py``.
"""

from __future__ import annotations

import os
import re
import typing

from pipeline.checked import field_docs
from pipeline.config import TARGET_NAMES, CompileTarget
from pipeline.facts import DrawFacts
from pipeline.rules.fact_reference import fact_paths, reference_markdown
from pipeline.rules.models import Define, Feature, NormalizeRule, Pass, RuleSet
from pipeline.facts import fact_fields, is_model
from paths import REPO

DOC = REPO / "docs" / "own-ubershader.md"
BLOCK = re.compile(r"(<!-- facts:begin[^\n]*-->\n)(.*?)(<!-- facts:end -->)", re.S)


def test_fact_reference_is_the_generated_one() -> None:
    text = DOC.read_text()
    if os.environ.get("PIPELINE_REPIN"):
        text = BLOCK.sub(lambda m: m.group(1) + reference_markdown() + m.group(3), text)
        DOC.write_text(text)
    match = BLOCK.search(text)
    assert match, "docs/own-ubershader.md lost its facts:begin/end markers"
    assert match.group(2) == reference_markdown()


def test_every_fact_field_has_a_row_with_its_type_and_a_meaning() -> None:
    rows = {f.path: f for f in fact_paths()}
    def walk(model, prefix=""):
        for name, info in fact_fields(model).items():
            path = prefix + name
            assert path in rows, path
            assert rows[path].type and rows[path].description, path
            inner = typing.get_args(info.annotation)[0] if typing.get_origin(info.annotation) is typing.Union \
                else info.annotation
            if is_model(inner):
                walk(inner, path + ".")
    walk(DrawFacts)
    assert rows["mesh.attributes[name].type"].type.startswith("'SCALAR'")
    assert rows["scene.materials.transmission"].type == "bool"
    assert rows["mesh.morphVertexCount"].type == "int | None"


def test_the_guide_names_every_field_style_and_target() -> None:
    text = DOC.read_text()
    for model in (RuleSet, Feature, Pass, CompileTarget, Define, NormalizeRule):
        for shown in field_docs(model):
            if shown in ("path",):
                continue
            assert f"`{shown}`" in text, f"{model.__name__}.{shown} is not documented"
    for style in ("value", "ifdef", "symbol"):
        assert f"`emit: {style}`" in text
    for target in TARGET_NAMES:
        assert target in text
    assert "Bring your own ubershader" in text.splitlines()[0]
