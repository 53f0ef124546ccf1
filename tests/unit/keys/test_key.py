"""The permutation key (keys/key.py): its canonical text, hash, ordering and parsing back from text."""

from __future__ import annotations

import msgspec
import pytest
from rules_fixtures import small_ruleset

from pipeline.keys.key import KeyTextError, PermutationKey

FEATURES = {"LIT": {"type": "bool"}, "MODE": {"values": ["X", "Y", "Z"]}, "COUNT": {"values": "open"},
            "FLIP": {"type": "bool", "mode": "specialization", "constant_id": 0}}
DERIVE = {"LIT": "material.unlit", "MODE": "'Y'", "COUNT": "1", "FLIP": "material.doubleSided"}


@pytest.fixture(scope="module")
def rs():
    return small_ruleset(FEATURES, derive=DERIVE, passes={"main": {"features": "all"}, "depth": {"features": []}})


def key(*features, shader="t", pass_name="main") -> PermutationKey:
    return PermutationKey(shader, pass_name, tuple(features))


def test_equal_parts_make_one_key_and_every_part_moves_the_hash() -> None:
    base = key(("LIT", True), ("MODE", "X"))
    same = key(("LIT", True), ("MODE", "X"))
    assert same == base and hash(same) == hash(base) and {base: 1}[same] == 1
    assert same.hash == base.hash and len(base.hash) == 64 and set(base.hash) <= set("0123456789abcdef")
    others = [key(("LIT", True), ("MODE", "X"), shader="u"), key(("LIT", True), ("MODE", "X"), pass_name="depth"),
              key(("LIT", False), ("MODE", "X")), key(("LIT", True), ("MODE", "Y")), key(("LIT", True))]
    assert len({k.hash for k in [base, *others]}) == 1 + len(others)


def test_text_form_and_json_document() -> None:
    k = key(("COUNT", -2), ("LIT", False), ("MODE", "Z"))
    assert k.text == str(k) == "t/main{COUNT=-2,LIT=0,MODE=Z}"
    assert key(pass_name="depth").text == "t/depth{}"
    assert k.to_json() == {"key": k.text, "hash": k.hash, "shader": "t", "pass": "main",
                           "features": {"COUNT": -2, "LIT": False, "MODE": "Z"}}
    assert k.value("MODE") == "Z" and k.value("LIT") is False
    with pytest.raises(KeyError):
        k.value("FLIP")  # a specialization constant is no part of a key


def test_keys_order_by_shader_then_pass_then_features() -> None:
    keys = [key(("LIT", True), shader="u"), key(("LIT", True)), key(pass_name="depth"), key(("LIT", False))]
    assert [k.text for k in sorted(keys)] == ["t/depth{}", "t/main{LIT=0}", "t/main{LIT=1}", "u/main{LIT=1}"]


@pytest.mark.parametrize("spelling, value", [("1", True), ("true", True), ("TRUE", True), ("0", False),
                                             ("false", False), ("False", False)])
def test_a_bool_parses_from_every_spelling(rs, spelling, value) -> None:
    parsed = PermutationKey.parse(f"t/main{{COUNT=0,LIT={spelling},MODE=X}}", [rs])
    assert parsed.value("LIT") is value
    assert parsed == key(("COUNT", 0), ("LIT", value), ("MODE", "X"))


def test_features_in_any_order_with_blanks_around_parse_to_the_canonical_key(rs) -> None:
    parsed = PermutationKey.parse("  t/main{MODE=Y,COUNT=12,LIT=1}\n", [rs])
    assert [name for name, _ in parsed.features] == ["COUNT", "LIT", "MODE"]
    assert parsed.text == "t/main{COUNT=12,LIT=1,MODE=Y}"
    assert PermutationKey.parse(parsed.text, [rs]) == parsed
    assert PermutationKey.parse("t/depth{}", [rs]) == key(pass_name="depth")


def test_the_rule_set_is_chosen_by_the_shader_named(rs) -> None:
    other = small_ruleset({"LIT": {"values": ["A", "B"]}}, derive={"LIT": "'A'"})
    renamed = msgspec.structs.replace(other, shader="u")  # another family with a feature of the same name
    assert PermutationKey.parse("u/main{LIT=B}", [rs, renamed]).value("LIT") == "B"
    assert PermutationKey.parse("t/main{COUNT=1,LIT=1,MODE=X}", [renamed, rs]).value("LIT") is True


@pytest.mark.parametrize("text, message", [
    ("t/main{COUNT=2.5,LIT=1,MODE=X}", "'2.5' is not a value of COUNT (values: any integer)"),
    ("t/main{COUNT=1,LIT=yes,MODE=X}", "'yes' is not a value of LIT (values: 0, 1)"),
    ("t/main{COUNT=1,LIT=1,MODE=x}", "'x' is not a value of MODE (values: X, Y, Z)"),
    ("t/main{COUNT=1,LIT=1,MODES=X}", "'MODES' is not a static feature of t/main (did you mean 'MODE'?)"),
    ("t/main{COUNT=1,LIT=1,FLIP=1}", "'FLIP' is not a static feature of t/main"),
    ("t/main{COUNT=1}", "missing feature(s): LIT, MODE"),
    ("t/mian{}", "unknown pass 'mian' of t (did you mean 'main'?)"),
    ("T/main{}", "not a key: expected shader/pass{NAME=VALUE,...}"),
    ("t/main{LIT={1}}", "not a key: expected shader/pass{NAME=VALUE,...}"),
])
def test_a_text_that_is_no_key_is_an_error_located_at_the_text(rs, text, message) -> None:
    with pytest.raises(KeyTextError) as info:
        PermutationKey.parse(f" {text} ", [rs])
    [diagnostic] = info.value.diagnostics
    assert diagnostic.message == message
    assert diagnostic.location.file == text
    assert str(info.value) == f"{text}: error: {message}"


def test_an_empty_text_is_located_at_a_placeholder(rs) -> None:
    with pytest.raises(KeyTextError) as info:
        PermutationKey.parse("   ", [rs])
    assert str(info.value) == "<key>: error: not a key: expected shader/pass{NAME=VALUE,...}"


def test_a_key_hashes_as_its_fields_and_travels_without_its_cached_hash() -> None:
    import pickle
    import subprocess
    import sys

    from paths import REPO

    key = PermutationKey("pbr", "forward", (("NORMAL_MAP", True), ("UV_SETS", 2)))
    assert hash(key) == hash(("pbr", "forward", key.features)) == hash(PermutationKey("pbr", "forward", key.features))
    assert hash(key) == hash(key)  # made once, then kept
    data = pickle.dumps({key: "found"})
    assert b"_hash" not in data  # another process hashes strings with another seed
    script = ("import pickle, sys; from pipeline.keys.key import PermutationKey\n"
              "d = pickle.loads(sys.stdin.buffer.read())\n"
              "print(d[PermutationKey('pbr', 'forward', (('NORMAL_MAP', True), ('UV_SETS', 2)))])")
    done = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True,
                          env={"PYTHONHASHSEED": "7", "PYTHONPATH": str(REPO)})
    assert done.stdout.strip() == b"found", done.stderr


def test_equal_keys_made_apart_are_interned_to_one_object() -> None:
    from pipeline.keys.key import interned

    a = PermutationKey("pbr", "forward", (("LIT", True),))
    b = PermutationKey("pbr", "forward", (("LIT", True),))
    assert a is not b and interned(a) is interned(b) is interned(a)
    assert interned(PermutationKey("pbr", "depth", (("LIT", True),))) is not interned(a)
