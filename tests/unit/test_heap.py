"""heap: the collector's settings during a cook, and that they are put back."""

from __future__ import annotations

import gc

import pytest

from pipeline.heap import YOUNG_THRESHOLD, collection_paused, cook_heap, frozen


@pytest.fixture(autouse=True)
def default_collector():
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*before)
    (gc.enable if enabled else gc.disable)()


def test_a_cook_freezes_what_was_alive_and_collects_young_objects_less_often() -> None:
    alive = [object() for _ in range(10)]
    with cook_heap():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        assert gc.get_freeze_count() >= len(alive)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_the_settings_come_back_when_the_cook_raises() -> None:
    with pytest.raises(RuntimeError), cook_heap():
        raise RuntimeError("bad input")
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0


def test_a_nested_cook_leaves_the_settings_to_the_outer_one() -> None:
    with cook_heap():
        frozen = gc.get_freeze_count()
        with cook_heap():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD and gc.get_freeze_count() == frozen
    assert gc.get_threshold() == (700, 10, 10)


def test_a_caller_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    with cook_heap():
        assert not gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)
    assert not gc.isenabled()


def test_cycles_made_during_a_cook_are_still_collected() -> None:
    class Node:
        pass

    with cook_heap():
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
        assert gc.collect() >= 2  # an explicit or threshold collection still finds new cycles


def test_a_frozen_heap_is_unfrozen_after_unless_its_owner_froze_it() -> None:
    gc.unfreeze()
    with frozen():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    gc.freeze()  # an owner's (a cook's) freeze
    try:
        with frozen():
            pass
        assert gc.get_freeze_count() > 0  # left for its owner
    finally:
        gc.unfreeze()


def test_collection_pauses_and_resumes_as_it_was() -> None:
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError):
        with collection_paused():
            raise KeyError("x")
    assert gc.isenabled()  # an error inside does not leave it off
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()
