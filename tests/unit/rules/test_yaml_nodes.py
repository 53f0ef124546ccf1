"""rules.yaml_nodes: rule-set YAML read safely into plain data, with the line and column of every node."""

from __future__ import annotations

import pytest
import yaml

from pipeline.checked import Invalid, convert
from pipeline.errors import RuleError
from pipeline.rules.models import RuleSet
from pipeline.rules.yaml_nodes import MAX_DEPTH, MAX_NODES, SafeRuleLoader, YamlDocument

PATH = "rules/t.yaml"


def data(text: str):
    return YamlDocument.parse(text, PATH).data()


def problems(text: str) -> list[str]:
    with pytest.raises(RuleError) as info:
        data(text)
    return [str(d) for d in info.value.diagnostics]


def test_only_true_and_false_are_booleans() -> None:
    words = ["yes", "no", "NO", "off", "On", "y", "n"]
    got = data(f"a: [{', '.join(words)}, true, False, TRUE, ~, 7, 1.5]\n")["a"]
    assert got[:len(words)] == words  # YAML 1.1 booleans stay the strings they are written as
    assert got[len(words):] == [True, False, True, None, 7, 1.5]
    assert [type(v) for v in got[len(words):len(words) + 3]] == [bool, bool, bool]


def test_an_empty_text_is_a_located_error() -> None:
    for text in ("", "# only a comment\n", "\n\n"):
        assert problems(text) == [f"{PATH}:1:1: error: the rule set is empty"]


def test_merges_copy_keys_and_own_entries_win() -> None:
    text = "base: &b {x: 1, y: 2}\nmore: &m {y: 3, z: 4}\nitem:\n  <<: [*b, *m]\n  x: 9\n"
    item = data(text)["item"]
    assert item == {"x": 9, "y": 2, "z": 4}  # own x wins; the first merge's y wins over the second's
    assert list(item) == ["x", "y", "z"]      # own entries first, then merged ones in merge order


def test_every_problem_of_a_text_comes_at_once_in_place() -> None:
    text = "a: !!binary aGVsbG8=\nb: 1\nb: 2\nc: !!set {x}\n"
    assert problems(text) == [f"{PATH}:1:4: error: YAML tag 'tag:yaml.org,2002:binary' is not allowed",
                              f"{PATH}:3:1: error: duplicate key 'b' (first at line 2)",
                              f"{PATH}:4:4: error: YAML tag 'tag:yaml.org,2002:set' is not allowed"]


def test_a_null_key_is_not_a_plain_word() -> None:
    assert problems("a: 1\n~: 2\n") == [f"{PATH}:2:1: error: mapping keys must be plain words"]


def test_a_sequence_key_is_a_located_error_not_a_crash() -> None:
    assert problems("shader: t\n? [a, b]\n: 1\n") == [f"{PATH}:2:3: error: mapping keys must be plain words"]
    merged = "base: &b\n  ? [a, b]\n  : 1\nshader:\n  <<: *b\n  x: 2\n"
    assert problems(merged) == [f"{PATH}:2:5: error: mapping keys must be plain words"]  # once, where it is written


def test_nesting_deeper_than_the_limit_is_refused_at_its_node() -> None:
    def nested(lists: int) -> str:
        return "a: " + "[" * lists + "]" * lists + "\n"

    value, depth = data(nested(MAX_DEPTH))["a"], 1
    while value:
        value, depth = value[0], depth + 1
    assert depth == MAX_DEPTH  # the root mapping is depth 0, the k-th list depth k: all within the limit
    (problem,) = problems(nested(MAX_DEPTH + 1))
    # the k-th list opens at column 3 + k: the refused one is list MAX_DEPTH + 1
    assert problem == (f"{PATH}:1:{4 + MAX_DEPTH}: error: rule set too large or too deeply nested "
                       f"(at most {MAX_NODES} nodes, {MAX_DEPTH} levels)")


def test_a_syntax_error_reads_the_same_as_the_pure_python_parser_says() -> None:
    text = "a: [1, 2\nb: 3\n"
    with pytest.raises(yaml.MarkedYAMLError) as info:
        yaml.compose(text, Loader=SafeRuleLoader)
    mark = info.value.problem_mark
    assert problems(text) == [f"{PATH}:{mark.line + 1}:{mark.column + 1}: error: invalid YAML: {info.value.problem}"]


LOCATED = "x: plain text\ny: 'quoted'\nz: |\n\n  line one\n  line two\nw: >\n  folded\n  more\nv: a\n  b\n"


@pytest.mark.parametrize("key, line, col, expected", [
    ("x", 1, 0, (1, 4)), ("x", 1, 6, (1, 10)),           # plain: from the value's first column
    ("y", 1, 0, (2, 5)), ("y", 1, 3, (2, 8)),            # quoted: past the quote
    ("z", 1, 0, (5, 3)), ("z", 2, 5, (6, 8)),            # literal block: its first text line, then line by line
    ("w", 2, 5, (8, 3)),                                 # folded block: lines are joined, so its first line
    ("v", 1, 2, (10, 4)),                                # a plain scalar over two lines: the node itself
])
def test_a_position_inside_an_expression_maps_to_the_file(key, line, col, expected) -> None:
    doc = YamlDocument.parse(LOCATED, PATH)
    where = doc.expr_location(doc.find((key,)), line, col)
    assert (where.file, where.line, where.col) == (PATH, *expected)


def test_a_data_path_finds_values_keys_and_the_nearest_node() -> None:
    doc = YamlDocument.parse("passes:\n  main:\n    features: [A, B]\n", PATH)
    spot = lambda loc, **kw: (doc.at(loc, **kw).line, doc.at(loc, **kw).col)  # noqa: E731
    assert spot(("passes", "main", "features", 1)) == (3, 19)      # the list item B
    assert spot(("passes", "main"), key=True) == (2, 3)            # the key itself
    assert spot(("passes", "main", "features", 7)) == (3, 15)      # no such item: the list
    assert spot(("passes", "other", "x")) == spot(("passes",))      # no such key: the nearest parent


def validation(text: str) -> list[str]:
    doc = YamlDocument.parse(text, PATH)
    with pytest.raises(Invalid) as info:
        convert({**doc.data(), "path": PATH}, RuleSet)
    return [str(d) for d in doc.validation_diagnostics(info.value.problems)]


def test_an_unknown_key_is_located_at_the_key_with_a_suggestion() -> None:
    found = validation("shader: t\nsources: {vertex: a.vert, fragment: a.frag}\n"
                       "features:\n  A: {type: bool, valuse: [a]}\npasses: {main: {}}\n")
    assert len(found) == 1
    assert found[0].startswith(f"{PATH}:4:19: error: unknown key 'valuse' in features.A (did you mean 'value")


def test_a_union_s_members_are_not_named_as_keys() -> None:
    found = validation("shader: t\nsources: {vertex: a.vert, fragment: a.frag}\nfeatures: {}\n"
                       "passes: {main: {features: [1]}}\n")
    assert found == [f"{PATH}:4:28: error: passes.main.features.0: expected str, got int"]


def test_a_missing_key_is_located_at_the_mapping_that_lacks_it() -> None:
    head = "shader: t\nsources: {vertex: a.vert, fragment: a.frag}\nfeatures: {A: {type: bool}}\n"
    assert validation(head) == [f"{PATH}:1:1: error: missing required key 'passes' in the rule set"]
    cases = "derive:\n  A:\n    - {when: mesh.normals, value: true}\n    - {when: material.unlit}\n"
    assert validation(head + cases + "passes: {main: {}}\n") == [
        f"{PATH}:7:7: error: missing required key 'value' in derive.A.cases.1"]  # the second case's mapping
