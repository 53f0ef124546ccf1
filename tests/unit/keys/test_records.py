"""Key records: rule evaluations as JSON and back."""

from __future__ import annotations

import pickle

import orjson
import pytest

from pipeline.keys.evaluate import FeatureTrace, KeyUse, NormalizeTrace, Trace
from pipeline.keys.key import PermutationKey
from pipeline.keys.records import StoredTrace, decode_uses, encode_uses, features_of

USES = [
    KeyUse(PermutationKey("pbr", "forward", (("ALPHA_MODE", "MASK"), ("NORMAL_MAP", True), ("UV_SETS", 2))),
           {"blend": False, "cull": "back"}, {"DOUBLE_SIDED": (0, False), "SPECULAR": (1, 0.5)}, {"EXPOSURE": 1.0},
           Trace({"ALPHA_MODE": FeatureTrace("MASK", "rules/pbr.yaml:10:5", 1, "material.alphaMode == 'MASK'",
                                             ("material.alphaMode",)),
                  "UV_SETS": FeatureTrace(2, None, None, None, ())},
                 (NormalizeTrace("rules/pbr.yaml:40:3", "forward", "UNLIT", (("NORMAL_MAP", False),)),))),
    KeyUse(PermutationKey("pbr", "depth", ()), {}, {}, {}, Trace({})),
]


def test_features_of_rebuilds_the_hashable_feature_tuple() -> None:
    assert features_of([["A", 1], ["B", "x"], ["C", True]]) == (("A", 1), ("B", "x"), ("C", True))
    assert features_of([]) == ()


def test_uses_survive_a_trip_through_json() -> None:
    back = decode_uses(orjson.loads(orjson.dumps(encode_uses(USES))))
    assert back == USES
    assert back[0].key.hash == USES[0].key.hash  # the same key, so the same hash


def test_an_empty_evaluation() -> None:
    assert encode_uses([]) == [] and decode_uses([]) == []


@pytest.mark.parametrize("damage", [
    lambda u: u.pop("trace"),
    lambda u: u.__setitem__("key", ["pbr", "forward"]),
    lambda u: u.__setitem__("trace", {"features": {}, "normalize": []}),  # a trace, but not as its text
    lambda u: u.__setitem__("specialization", {"A": 3}),
    lambda u: u.__setitem__("render_state", [1, 2]),
])
def test_a_record_of_another_layout_raises(damage) -> None:
    data = orjson.loads(orjson.dumps(encode_uses(USES)))
    damage(data[0])
    with pytest.raises((KeyError, TypeError, ValueError)):
        decode_uses(data)


def test_a_trace_read_back_is_decoded_only_when_read_and_re_encodes_as_read() -> None:
    data = orjson.loads(orjson.dumps(encode_uses(USES)))
    back = decode_uses(data)
    assert all(isinstance(u.trace, StoredTrace) and u.trace._made is None for u in back)  # a cook reads none
    assert orjson.loads(orjson.dumps(encode_uses(back))) == data  # written again as read, without decoding it
    assert all(u.trace._made is None for u in back)
    assert back[0].trace.features["ALPHA_MODE"].location == "rules/pbr.yaml:10:5"
    assert back[0].trace == USES[0].trace and USES[0].trace == back[0].trace and back[1].trace != USES[0].trace
    assert orjson.loads(orjson.dumps(encode_uses(back))) == data  # and once decoded, encoded to the same text
    again = pickle.loads(pickle.dumps(back))
    assert again == USES


def test_a_trace_text_that_does_not_decode_raises_when_read() -> None:
    data = orjson.loads(orjson.dumps(encode_uses(USES)))
    data[0]["trace"] = '{"features": {"A": [1, 2]}, "normalize": []}'
    (use, _) = decode_uses(data)
    with pytest.raises(ValueError, match="trace does not decode"):
        use.trace.features
