"""The cyclic garbage collector during a cook: kept off the long-lived data.

A cook allocates many small objects that live until it ends (facts, keys, job
records, manifest entries) and almost no reference cycles.  Python's collector, with
its default thresholds, walks that growing heap again and again: a large share of the
main process's time on a big world, for nothing collected.  :func:`cook_heap` moves
everything alive when the cook starts (modules, rule sets, the world) out of the
collector's sight (``gc.freeze``) and collects the youngest generation less often
while the cook runs; both are put back when it ends, so a library user's process
keeps its own settings.  The command line's cook (:mod:`pipeline.__main__`) also
keeps the collector off while its no-op check walks the world (:func:`collection_paused`: a list
per file, no cycle) and freezes what it walked for the cook that uses it
(:func:`frozen`): at 100,000 files the collections over that walk cost a whole-world
cook a tenth of its time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000  # allocations between young collections during a cook (Python's default: 700)


@contextmanager
def cook_heap() -> Iterator[None]:
    """Run the body with the collector kept off long-lived data (nested uses leave it to the outermost)."""
    before = gc.get_threshold()
    if before[0] >= YOUNG_THRESHOLD or not gc.isenabled():
        yield  # an outer cook (or the caller) already chose
        return
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile (it resumes as it was after).

    For work that allocates tens of thousands of small containers that form no cycles (a chunk's
    scan, the no-op check's stat walk): the collections their allocations trigger free nothing and
    only walk the process's long-lived objects again and again; paused, the memory is the same, and
    a cycle (an error's traceback) is collected once it resumes.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """The body with this process's heap as it is now out of the collector's sight (``gc.freeze``); a heap
    frozen already (an outer cook's) is left for its owner to unfreeze.  Around a fork pool's start, so
    forked workers' collections do not touch (and copy) the parent's objects."""
    outer = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not outer:
            gc.unfreeze()
