"""What a cook holds of pool-built chunks: names numbered once, sets and mappings of their numbers."""

from __future__ import annotations

import pytest

from pipeline.outputs.held import HeldMap, HeldSet, Numbered


def test_names_are_numbered_once_in_the_order_first_seen() -> None:
    names = Numbered()
    assert [names.of(n) for n in ("b", "a", "b", "c")] == [0, 1, 0, 2]
    assert names.items == ["b", "a", "c"]
    made = Numbered()
    assert made.of(("k", 1), lambda key: f"entry of {key[0]}") == 0 and made.items == ["entry of k"]
    assert made.of(("k", 1), lambda key: "never made") == 0 and made.items == ["entry of k"]


def test_a_held_set_is_the_set_of_its_names() -> None:
    names = Numbered()
    for n in ("z", "y"):
        names.of(n)  # numbered by other chunks first: a set's order is its numbers', not its names'
    held = HeldSet(names, ["a", "y", "z", "a"])
    plain = frozenset({"a", "y", "z"})
    assert held == plain and plain == held and len(held) == 3
    assert sorted(held) == ["a", "y", "z"]
    assert "a" in held and "b" not in held and ["unhashable"] not in held
    assert held <= plain | {"q"} and not held <= {"a"} and plain >= held
    assert held | {"q"} == plain | {"q"} and isinstance(held | {"q"}, frozenset)
    assert set().union(held, {"q"}) == {"a", "y", "z", "q"}
    other = HeldSet(names, ["b"])
    assert "b" not in held and "b" in other  # a name another set added is not in this one
    assert HeldSet(names, []) == frozenset()


def test_a_held_map_is_the_mapping_of_its_pairs() -> None:
    names = Numbered()
    names.of("later")
    counts = HeldMap(names, [("k2", 7), ("k1", 3)])
    assert counts == {"k1": 3, "k2": 7} and {"k2": 7, "k1": 3} == counts
    assert counts["k1"] == 3 and "k2" in counts and "later" not in counts and len(counts) == 2
    with pytest.raises(KeyError):
        counts["later"]
    with pytest.raises(KeyError):
        counts["never named"]
    assert dict(counts.items()) == {"k1": 3, "k2": 7} and counts.get("x", 0) == 0
    shared = [{"entry": 0}, {"entry": 1}]
    entries = HeldMap(names, [("k1", 1), ("k2", 1)], shared)
    assert entries["k1"] is entries["k2"] is shared[1]  # one object for every chunk that holds it
    assert HeldMap(names, []) == {}
