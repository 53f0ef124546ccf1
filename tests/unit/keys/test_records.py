"""Key records: rule evaluations as JSON and back."""

from __future__ import annotations

import hashlib
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


def _round_trip(uses: list[KeyUse]) -> tuple[list[dict], dict[str, str]]:
    """An evaluation record's data as read back, and the trace records written beside it."""
    data, traces = encode_uses(uses)
    return orjson.loads(orjson.dumps(data)), traces


def test_uses_survive_a_trip_through_json() -> None:
    data, traces = _round_trip(USES)
    back = decode_uses(data, traces.get)
    assert back == USES
    assert back[0].key.hash == USES[0].key.hash  # the same key, so the same hash


def test_an_evaluation_names_its_traces_by_the_hash_of_their_text() -> None:
    data, traces = _round_trip(USES)
    assert [u["trace"] for u in data] == list(traces)
    assert all(digest == hashlib.sha256(text.encode()).hexdigest() for digest, text in traces.items())
    twice, shared = _round_trip(USES + USES)
    assert shared == traces and [u["trace"] for u in twice] == [u["trace"] for u in data] * 2  # stored once
    assert all("ALPHA_MODE" not in orjson.dumps(u).decode() or u["key"][2] for u in data)  # no trace text inside


def test_an_empty_evaluation() -> None:
    assert encode_uses([]) == ([], {}) and decode_uses([], {}.get) == []


@pytest.mark.parametrize("damage", [
    lambda u: u.pop("trace"),
    lambda u: u.__setitem__("key", ["pbr", "forward"]),
    lambda u: u.__setitem__("trace", {"features": {}, "normalize": []}),  # a trace, but not named by its hash
    lambda u: u.__setitem__("specialization", {"A": 3}),
    lambda u: u.__setitem__("render_state", [1, 2]),
])
def test_a_record_of_another_layout_raises(damage) -> None:
    data, traces = _round_trip(USES)
    damage(data[0])
    with pytest.raises((KeyError, TypeError, ValueError)):
        decode_uses(data, traces.get)


def test_a_trace_is_read_and_decoded_only_when_read_and_re_encodes_as_read() -> None:
    data, traces = _round_trip(USES)
    reads = []
    back = decode_uses(data, lambda digest: reads.append(digest) or traces.get(digest))
    assert all(isinstance(u.trace, StoredTrace) and u.trace._made is None for u in back)
    assert reads == []  # a cook reads none
    assert back[0].trace.features["ALPHA_MODE"].location == "rules/pbr.yaml:10:5"
    assert reads == [data[0]["trace"]]  # that trace alone, once
    assert encode_uses(back) == encode_uses(USES)  # encoded to the same record and texts
    assert reads == [data[0]["trace"], data[1]["trace"]] and back[1].trace._made is None  # read, not decoded
    assert back[0].trace == USES[0].trace and USES[0].trace == back[0].trace and back[1].trace != USES[0].trace
    assert len(reads) == 2  # each read once
    shared = decode_uses(data + data, traces.get)
    assert [u.trace for u in shared[2:]] == [u.trace for u in shared[:2]]
    assert all(a.trace is b.trace for a, b in zip(shared, shared[2:]))  # one object (and one read) for a trace
    again = pickle.loads(pickle.dumps(back))  # a pickled trace carries its text
    assert again == USES


def test_a_trace_that_does_not_decode_or_is_absent_raises_when_read() -> None:
    data, traces = _round_trip(USES)
    garbled = {data[0]["trace"]: '{"features": {"A": [1, 2]}, "normalize": []}'}
    (use, _) = decode_uses(data, garbled.get)
    with pytest.raises(ValueError, match="trace does not decode"):
        use.trace.features
    (_, use) = decode_uses(data, garbled.get)
    with pytest.raises(ValueError, match="is not in the store"):
        use.trace.normalize


def test_store_missing_records_what_the_store_lacks_asking_once_per_call_for_each_hash_once() -> None:
    from pipeline.cache.store import Store
    from pipeline.keys.records import TRACES, store_missing

    store = Store.in_memory()
    store.set(TRACES, "a", "kept")
    asked, present = [], store.present
    store.present = lambda kind, keys: asked.append(sorted(keys)) or present(kind, keys)
    known: set[str] = set()
    store_missing(store, TRACES, {"a": "new", "b": "text b"}, known)
    store_missing(store, TRACES, {"b": "other", "c": "text c"}, known)
    store_missing(store, TRACES, {"c": "again"}, known)
    assert [store.get(TRACES, k) for k in "abc"] == ["kept", "text b", "text c"]  # a stored record stays
    assert asked == [["a", "b"], ["c"]] and known == {"a", "b", "c"}  # one question per call, each hash once
