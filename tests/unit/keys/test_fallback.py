"""Fallback keys (keys/fallback.py): a pass's declared always-cooked key, from defaults, given values and normalize."""

from __future__ import annotations

import pytest
from rules_fixtures import small_ruleset

from pipeline.errors import RuleError
from pipeline.keys.fallback import fallback_key, fallback_keys
from pipeline.keys.key import PermutationKey

FEATURES = {"LIT": {"type": "bool"}, "MODE": {"values": ["X", "Y", "Z"]},
            "COUNT": {"values": "open", "default": 3},
            "FLIP": {"type": "bool", "mode": "specialization", "constant_id": 0}}
DERIVE = {"LIT": "material.unlit", "MODE": "'Y'", "COUNT": "1", "FLIP": "material.doubleSided"}
NORMALIZE = [{"description": "unlit shading has one mode", "when": "not LIT", "set": {"MODE": "X"}}]


def family(passes: dict):
    return small_ruleset(FEATURES, NORMALIZE, passes=passes, derive=DERIVE)


def test_only_the_passes_that_declare_a_fallback_have_one() -> None:
    rs = family({"main": {"features": "all", "fallback": {}}, "depth": {"features": ["LIT"]},
                 "shadow": {"features": ["MODE"], "fallback": {}}})
    keys = fallback_keys(rs)
    assert sorted(keys) == ["main", "shadow"]
    assert all(key.shader == "t" and key.pass_name == name for name, key in keys.items())


def test_an_empty_fallback_is_every_static_feature_at_its_default() -> None:
    rs = family({"main": {"features": "all", "fallback": {}}})
    key = fallback_key(rs, "main")
    # the first listed value of each domain, the declared default of an open int; FLIP is a specialization
    # constant, chosen per draw at run time, so it is no part of the key
    assert dict(key.features) == {"LIT": False, "MODE": "X", "COUNT": 3}


def test_given_values_override_the_defaults() -> None:
    rs = family({"main": {"features": "all", "fallback": {"LIT": True, "MODE": "Z", "COUNT": 8}}})
    assert dict(fallback_key(rs, "main").features) == {"LIT": True, "MODE": "Z", "COUNT": 8}


def test_the_pass_rules_normalize_the_fallback() -> None:
    rs = family({"main": {"features": "all", "fallback": {"MODE": "Z"}}})  # LIT stays false: MODE is forced to X
    assert fallback_key(rs, "main").value("MODE") == "X"


def test_a_fallback_key_is_the_key_its_text_parses_to() -> None:
    """Features in the key are in name order whatever order the pass lists them, as for every key."""
    rs = family({"main": {"features": ["MODE", "LIT", "COUNT"], "fallback": {"LIT": True, "MODE": "Y"}}})
    key = fallback_key(rs, "main")
    assert [name for name, _ in key.features] == ["COUNT", "LIT", "MODE"]
    assert PermutationKey.parse(key.text, [rs]) == key
    assert key.text == "t/main{COUNT=3,LIT=1,MODE=Y}"


@pytest.mark.parametrize("fallback, message", [
    ({"COUNT": True}, "fallback COUNT=1 is not a value of COUNT"),  # a bool is no integer
    ({"LIT": 2}, "fallback LIT=2 is not a value of LIT"),
    ({"COUNT": "many"}, "fallback COUNT=many is not a value of COUNT"),
    ({"FLIP": True}, "fallback names 'FLIP', which is not a static feature of the pass"),
    ({"MODE": "Y"}, "fallback names 'MODE', which is not a static feature of the pass"),
])
def test_a_fallback_the_pass_cannot_have_is_a_rule_error_at_its_pointer(fallback, message) -> None:
    rs = family({"main": {"features": "all"}, "depth": {"features": ["LIT", "COUNT"], "fallback": fallback}})
    assert fallback_key(rs, "main").pass_name == "main"  # a pass without a fallback still has its defaults key
    with pytest.raises(RuleError) as info:
        fallback_keys(rs)
    [diagnostic] = info.value.diagnostics
    assert diagnostic.message == message
    assert (diagnostic.location.file, diagnostic.location.pointer) == ("test.yaml", "/passes/depth/fallback")
    assert str(diagnostic) == f"test.yaml: /passes/depth/fallback: error: {message}"
