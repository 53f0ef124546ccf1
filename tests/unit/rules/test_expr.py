"""The rule expression language: semantics, fact-path checks and refusals."""

from __future__ import annotations

import pytest
from rules_fixtures import facts, mesh, texture

from pipeline.rules.expr import Domain, ExprError, Scope, buffer_facts, compile_expr

FEATURES = {
    "ALPHA_MODE": Domain("ALPHA_MODE", "enum", ("OPAQUE", "MASK", "BLEND")),
    "UV_SETS": Domain("UV_SETS", "int", (0, 1, 2)),
    "UNLIT": Domain("UNLIT", "bool", (False, True)),
}
FACTS = Scope(facts=True, features=FEATURES, read_features=False)
FEATS = Scope(facts=False, features=FEATURES)
BOTH = Scope(facts=True, features=FEATURES)

PLAIN = facts(mesh("NORMAL", "TEXCOORD_0", "JOINTS_0", "WEIGHTS_0", morphTargets=3,
                   morphAttributes=("NORMAL", "POSITION")),
              {"normalTexture": texture(), "extras": {"shader": "toon", "n": 2}, "alphaMode": "MASK"})


def run(text: str, scope: Scope = FACTS, features: dict | None = None):
    return compile_expr(text, scope)(PLAIN, features or {"ALPHA_MODE": "MASK", "UV_SETS": 1, "UNLIT": False})


@pytest.mark.parametrize("text, expected", [
    ("material.normalTexture is not None and mesh.normals", True),
    ("material.clearcoat.clearcoatFactor > 0", False),  # absent extension: None, not a crash
    ("material.clearcoat.clearcoatFactor", None),
    ("material.extras.shader", "toon"),
    ("material.extras['shader'] == 'toon'", True),
    ("material.extras.missing is None", True),
    ("has('JOINTS_0') and mesh.has('WEIGHTS_0')", True),
    ("has('JOINTS_1')", False),
    ("count(mesh.morphAttributes)", 2),
    ("count(material.clearcoat)", 0),
    ("'NORMAL' in mesh.morphAttributes", True),
    ("'TANGENT' not in mesh.morphAttributes", True),
    ("bucket(mesh.morphTargets, [0, 1, 2, 4, 8])", 4),
    ("bucket(20, [0, 1, 2, 4, 8])", 8),
    ("min(material.maxUv + 1, mesh.texcoordSets, 2)", 0),
    ("max([1, 5, 3])", 5),
    ("8 if mesh.jointSets >= 2 else 4", 4),
    ("mesh.vertexCount * 2 - 8", 40),
    ("material.emissiveStrength + 1", None),
    ("material.ior < 1.5", False),
    ("mesh.attributes.TEXCOORD_0.type", "VEC2"),
    ("mesh.attributes['COLOR_0'].type", None),
    ("mesh.morphAttributes[0]", "NORMAL"),
    ("mesh.morphAttributes[9]", None),
    ("material.alphaMode in ('MASK', 'BLEND')", True),
    ("1 < mesh.morphTargets < 4", True),
    ("not material.doubleSided", True),
    ("-mesh.morphTargets", -3),
    ("[1, 2]", (1, 2)),
    ("chunk.level", "level"),
    ("scene.lights.point == 0", True),
])
def test_fact_expressions(text, expected):
    assert run(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("ALPHA_MODE == 'MASK' and not UNLIT", True),
    ("UV_SETS in [1, 2]", True),
    ("UV_SETS > 1 or ALPHA_MODE != 'MASK'", False),
])
def test_feature_expressions(text, expected):
    assert run(text, FEATS) == expected


def test_paths_read_are_recorded():
    e = compile_expr("material.normalTexture is not None and has('TANGENT') and UV_SETS > 0", BOTH)
    assert e.facts == {"material.normalTexture", "mesh.attributes['TANGENT']"}
    assert e.features == {"UV_SETS"}


def fails(text: str, scope: Scope = FACTS) -> ExprError:
    with pytest.raises(ExprError) as info:
        compile_expr(text, scope)
    return info.value


@pytest.mark.parametrize("text, message", [
    ("material.normalTextur is None", "unknown fact 'material.normalTextur' (did you mean 'material.normalTexture'?)"),
    ("materal.unlit", "unknown fact 'materal.unlit' (did you mean 'material.unlit'?)"),
    ("mesh.attributes.POSITION.typ", "unknown fact 'mesh.attributes.POSITION.typ' (did you mean"),
    ("material.alphaMode.x", "unknown fact 'material.alphaMode.x'"),
    ("material.alphaMode == 'BLEN'", "'BLEN' is not a value of material.alphaMode (did you mean 'BLEND'?)"),
    ("ALPHA_MODE", "features cannot be read here"),
    ("bucket(mesh.morphTargets, [4, 2])", "ascending"),
    ("bucket(mesh.morphTargets, mesh.morphAttributes)", "literal, non-empty list"),
    ("count()", "count() takes 1 argument(s), got 0"),
    ("has('A', 'B')", "has() takes 1 argument(s)"),
    ("material.unlit ** 2", "operator Pow is not allowed"),
    ("material.unlit ~", "invalid expression"),
])
def test_located_fact_errors(text, message):
    assert message in fails(text).message


@pytest.mark.parametrize("text, message", [
    ("ALPHA_MOD == 'MASK'", "unknown feature 'ALPHA_MOD' (did you mean 'ALPHA_MODE'?)"),
    ("ALPHA_MODE == 'MAKS'", "'MAKS' is not a value of ALPHA_MODE (did you mean 'MASK'?)"),
    ("ALPHA_MODE in ['OPAQUE', 'BLNED']", "'BLNED' is not a value of ALPHA_MODE"),
    ("material.unlit", "facts cannot be read here"),
    ("has('JOINTS_0')", "has() reads mesh facts"),
])
def test_located_feature_errors(text, message):
    assert message in fails(text, FEATS).message


def test_error_column_points_into_the_expression():
    error = fails("material.unlit and ALPHA_MODE == 'BLEN'", BOTH)
    assert (error.line, error.col) == (1, 33)


ATTACKS = [
    ("__import__('os').system('true')", "'__import__' is not allowed"),
    ("().__class__.__bases__[0].__subclasses__()", "'__subclasses__' is not allowed"),
    ("mesh.__class__", "'__class__' is not allowed"),
    ("material._private", "'_private' is not allowed"),
    ("mesh.attributes.__dict__", "'__dict__' is not allowed"),
    ("__builtins__", "names starting with '_' are not allowed"),
    ("open('/etc/passwd').read()", "calls are not allowed"),
    ("eval('1')", "calls are not allowed ('eval')"),
    ("exec('import os')", "calls are not allowed ('exec')"),
    ("getattr(mesh, 'x')", "calls are not allowed ('getattr')"),
    ("globals()", "calls are not allowed"),
    ("chunk.name.upper()", "calls are not allowed ('chunk.name.upper')"),
    ("mesh.attributes.keys()", "calls are not allowed"),
    ("(lambda: 1)()", "lambdas are not allowed"),
    ("lambda: 0", "lambdas are not allowed"),
    ("[x for x in mesh.morphAttributes]", "comprehensions are not allowed"),
    ("{x for x in (1, 2)}", "comprehensions are not allowed"),
    ("{k: 1 for k in 'ab'}", "comprehensions are not allowed"),
    ("any(x for x in [1])", "calls are not allowed"),
    ("import os", "invalid expression"),
    ("from os import system", "invalid expression"),
    ("(x := 1)", "assignments (:=) are not allowed"),
    ("f'{mesh}'", "f-strings are not allowed"),
    ("{'a': 1}", "dict literals are not allowed"),
    ("mesh.morphAttributes[0:2]", "slices are not allowed"),
    ("min(*mesh.morphAttributes)", "starred expressions are not allowed"),
    ("max(1, key=2)", "keyword arguments are not allowed"),
    ("'a' * 10 ** 9", "operator Pow is not allowed"),
    ("1; import os", "invalid expression"),
    ("mesh.has.__self__", "'__self__' is not allowed"),
    ("b'abc'", "bytes literals are not allowed"),
    ("...", "ellipsis literals are not allowed"),
    ("yield 1", "invalid expression"),
    ("x" * 3000, "expression is too long"),
    ("(" * 300 + "1" + ")" * 300, "invalid expression"),
    ("-" * 1500 + "1", "too deeply nested"),
    ("not " * 400 + "mesh.normals", "too deeply nested"),
]


@pytest.mark.parametrize("text, message", ATTACKS, ids=[a[0][:30] for a in ATTACKS])
def test_attack_strings_are_refused_with_a_located_error(text, message):
    error = fails(text, BOTH)
    assert message in error.message
    assert error.line >= 1 and error.col >= 0


def test_string_repetition_is_not_arithmetic():
    with pytest.raises(ExprError, match="arithmetic needs numbers; 'chunk.name' is a string"):
        compile_expr("chunk.name * 1000000000", FACTS)  # typed at load
    e = compile_expr("material.extras.shader * 1000000000", FACTS)  # known only at run time
    from pipeline.rules.expr import EvalError
    with pytest.raises(EvalError):
        e(PLAIN, None)


def test_ordering_with_strings_and_numbers_is_an_error_not_silent():
    with pytest.raises(ExprError, match="'>' cannot compare 'chunk.name' \\(a string\\) with '1' \\(a number\\)"):
        compile_expr("chunk.name > 1", FACTS)
    from pipeline.rules.expr import EvalError
    with pytest.raises(EvalError):
        compile_expr("material.extras.shader > 1", FACTS)(PLAIN, None)


def test_subscript_of_dict_with_dunder_key_is_just_a_missing_key():
    assert run("material.extras['__class__']") is None


def test_a_literal_compiles_to_a_constant() -> None:
    expr = compile_expr(True, Scope(facts=False))
    assert expr.constant and expr() is True and expr.values == frozenset([True])


def test_an_expression_reports_only_the_deepest_fact_paths_it_reads() -> None:
    expr = compile_expr("material.normalTexture is not None and material.normalTexture.uv == 1", Scope(facts=True))
    assert expr.facts == frozenset(["material.normalTexture.uv"])
    assert expr(facts(material={"normalTexture": texture(uv=1)})) is True
    assert expr(facts(mesh("NORMAL"))) is False


def test_feature_reads_and_values_are_kept() -> None:
    scope = Scope(facts=False, features={"UV_SETS": Domain("UV_SETS", "int", (0, 1, 2))})
    expr = compile_expr("UV_SETS if UV_SETS < 2 else 2", scope)
    assert expr.features == frozenset(["UV_SETS"]) and not expr.constant
    assert expr(None, {"UV_SETS": 1}) == 1


def test_too_long_and_non_string_texts_are_refused() -> None:
    with pytest.raises(ExprError, match="too long"):
        compile_expr("1 + " * 600 + "1", Scope(facts=False))
    with pytest.raises(ExprError, match="must be a string"):
        compile_expr(["mesh"], Scope(facts=True))


def test_buffer_facts_are_the_facts_that_need_buffer_data() -> None:
    assert buffer_facts() == frozenset(["mesh.colorAllWhite", "mesh.maxJointInfluences"])
