"""Rule sets from untrusted hands: attack expressions and YAML tags are located errors, never code.

tests/unit/rules/test_expr.py covers the expression whitelist one node kind at a time; here the
attacks arrive the way a user would send them, inside rule-set files, and the error
must point at the expression's line and column in that file.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from rules_fixtures import facts, mesh

from pipeline.cli import main
from pipeline.errors import RuleError
from pipeline.rules.expr import Domain, EvalError, ExprError, Scope, compile_expr
from pipeline.rules.load import load_ruleset_text
from pipeline.rules.yaml_nodes import MAX_DEPTH, MAX_NODES, YamlDocument

TEMPLATE = """shader: t
sources: {{vertex: t.vert, fragment: t.frag}}
features:
  A: {{type: bool}}
derive:
  A: {derive}
normalize:
  - when: {when}
    set: {{A: false}}
passes:
  main: {{features: all, skip_when: {skip}}}
"""
SAFE = {"derive": "material.unlit", "when": "A", "skip": "not A"}
# (key, line of that expression in TEMPLATE, column where the value starts)
PLACES = {"derive": (6, 6), "when": (8, 11), "skip": (11, 36)}


def ruleset_text(place: str, expression: str) -> str:
    values = dict(SAFE)
    values[place] = '"' + expression.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return TEMPLATE.format(**values)


def load_error(text: str) -> RuleError:
    with pytest.raises(RuleError) as info:
        load_ruleset_text(text, "rules/t.yaml")
    return info.value


def test_the_template_itself_loads():
    assert load_ruleset_text(TEMPLATE.format(**SAFE), "rules/t.yaml").shader == "t"


ATTACKS = [
    "__import__('os').system('touch /tmp/pwned')",
    "().__class__.__base__.__subclasses__()",
    "mesh.__class__.__init__.__globals__",
    "open('/etc/passwd')",
    "eval(chunk.name)",
    "exec('import os')",
    "compile('1', 'x', 'eval')",
    "breakpoint()",
    "type(mesh)",
    "vars()",
    "lambda: 0",
    "[c for c in chunk.name]",
    "{c: 1 for c in 'ab'}",
    "(c for c in 'ab')",
    "import os",
    "(a := 1)",
    "'abc'.upper",
    "(1).real",
    "[1, 2].count",
    "chunk.name.upper",
    "chunk.name.__len__",
    "mesh.has",
    "2 ** 100000000",
    "10 ** 10 ** 10",
    "1 << 100000",
    "'%999999999d' % 1",
    "f'{mesh}'",
    "mesh.morphAttributes[0:1]",
    "not " * 400 + "A",
    "1" * 5000,
]


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("expression", ATTACKS, ids=[a[:32] for a in ATTACKS])
def test_attack_expression_in_a_rule_file_is_a_located_error(tmp_path, place, expression):
    error = load_error(ruleset_text(place, expression))
    (diagnostic,) = error.diagnostics
    line, col = PLACES[place]
    assert diagnostic.location.file == "rules/t.yaml"
    assert diagnostic.location.line == line, str(diagnostic)
    assert diagnostic.location.col >= col, str(diagnostic)
    assert str(diagnostic).startswith(f"rules/t.yaml:{line}:")
    assert not (tmp_path / "pwned").exists()


def test_arithmetic_overflow_is_an_evaluation_error_not_a_huge_number():
    scope = Scope(facts=True, features={"A": Domain("A", "bool", (False, True))})
    draw = facts(mesh("NORMAL", vertexCount=10**6))
    big = compile_expr("mesh.vertexCount * 1000000 * 1000000 * 1000000 * 1000000", scope)
    with pytest.raises(EvalError, match="overflow"):
        big(draw, {})
    with pytest.raises(EvalError, match="overflow"):
        compile_expr("1e308 * 10", scope)(draw, {})
    assert compile_expr("mesh.vertexCount * 1000000", scope)(draw, {}) == 10**12


def test_expression_errors_carry_a_position_inside_the_expression():
    with pytest.raises(ExprError) as info:
        compile_expr("material.unlit and (1).__class__", Scope(facts=True, features={}))
    assert (info.value.line, info.value.col) == (1, 19)


# ---------------------------------------------------------------- YAML
YAML_ATTACKS = [
    ("shader: !!python/object:os.system {{}}\n", 1),
    ("shader: !!python/object/apply:os.system ['touch {marker}']\n", 1),
    ("shader: !!python/object/new:os.system ['touch {marker}']\n", 1),
    ("shader: !!python/name:os.system\n", 1),
    ("shader: !!python/module:os\n", 1),
    ("shader: t\nsources: !!binary aGVsbG8=\n", 2),
    ("shader: t\nfeatures: !custom {{A: 1}}\n", 2),
    ("shader: t\nfeatures:\n  A: !!set {{a, b}}\n", 3),
]


@pytest.mark.parametrize("text, line", YAML_ATTACKS, ids=[t[0].split("\n")[-2][:40] for t in YAML_ATTACKS])
def test_yaml_tags_are_located_errors_and_never_construct_anything(tmp_path, text, line):
    marker = tmp_path / "pwned"
    error = load_error(text.format(marker=marker))
    assert any("is not allowed" in d.message for d in error.diagnostics), str(error)
    assert error.diagnostics[0].location.line == line
    assert not marker.exists()


def test_yaml_alias_bomb_is_refused_after_a_bounded_number_of_nodes(monkeypatch):
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    text = "shader: t\n" + "\n".join(rows) + "\n"          # expands to over 10**9 nodes
    visited = []
    walk = YamlDocument._data
    monkeypatch.setattr(YamlDocument, "_data", lambda self, node, *args: visited.append(node) or walk(self, node, *args))
    error = load_error(text)
    assert len(visited) == MAX_NODES + 1                      # refused at the first node over the bound
    (diagnostic,) = error.diagnostics
    assert diagnostic.location.file == "rules/t.yaml" and diagnostic.location.line in range(2, 11)
    assert diagnostic.message == f"rule set too large or too deeply nested (at most {MAX_NODES} nodes, {MAX_DEPTH} levels)"


def test_rules_check_cli_reports_an_attack_with_exit_1_and_no_traceback(tmp_path, monkeypatch):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "t.yaml").write_text(ruleset_text("derive", "__import__('os').system('true')"))
    (tmp_path / "rules" / "u.yaml").write_text("shader: !!python/object/apply:os.system ['true']\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["rules", "check", "--rules", "rules"])
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert [line for line in result.output.splitlines() if ": error: " in line] == [
        "rules/t.yaml:6:7: error: access to '__import__' is not allowed (names starting with '_' are refused)",
        "rules/u.yaml:1:9: error: YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
    ]
