"""What a cook holds of each chunk built on its pool, in a few bytes per entry.

Until the level manifests are written, the cook's process holds, per chunk built, its
keys (with their entries and draws), its pipeline states and its blobs: at 100,000 files
about 1,000 chunks of a few hundred each.  As dicts and frozensets of strings that is
about 45 MB; here each name (key text, pipeline-state id, blob hash) is held once per
cook and numbered (:class:`Numbered`), and a chunk holds sorted arrays of numbers
(:class:`HeldSet`, :class:`HeldMap`), read through the usual set and mapping interfaces.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence, Set
from typing import Any, Callable


class Numbered:
    """Things numbered in the order first seen, each held once."""

    __slots__ = ("number", "items")

    def __init__(self) -> None:
        self.number: dict[Hashable, int] = {}
        self.items: list[Any] = []

    def of(self, key: Hashable, make: Callable[[Hashable], Any] | None = None) -> int:
        """The number of ``key``; a key not seen yet is numbered next, holding ``make(key)`` (or itself)."""
        found = self.number.get(key)
        if found is None:
            found = self.number[key] = len(self.items)
            self.items.append(key if make is None else make(key))
        return found


def _find(numbers: array, names: Numbered, name: object) -> int | None:
    """The position of ``name``'s number in the sorted ``numbers``; None when it is not there."""
    try:
        n = names.number.get(name)  # type: ignore[arg-type]
    except TypeError:  # not hashable: not a name
        return None
    if n is None:
        return None
    at = bisect_left(numbers, n)
    return at if at < len(numbers) and numbers[at] == n else None


class _Held:
    """What a held set and a held mapping share: names by their numbers, sorted."""

    __slots__ = ("_names", "_numbers")
    _names: Numbered
    _numbers: array

    def __contains__(self, name: object) -> bool:
        return _find(self._numbers, self._names, name) is not None

    def __iter__(self) -> Iterator[str]:
        items = self._names.items
        return (items[n] for n in self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


class HeldSet(_Held, Set):
    """A set of names (a chunk's blob hashes, say): their numbers, sorted."""

    __slots__ = ()

    def __init__(self, names: Numbered, items: Iterable[str]):
        self._names = names
        self._numbers = array("q", sorted({names.of(item) for item in items}))

    @classmethod
    def _from_iterable(cls, it: Iterable) -> frozenset:
        return frozenset(it)

    def __repr__(self) -> str:
        return f"HeldSet({sorted(self)!r})"


class HeldMap(_Held, Mapping):
    """name -> value: the names' numbers, sorted, and beside each an int; with ``table``, the value is
    ``table[that int]`` (one object shared by every chunk that holds it)."""

    __slots__ = ("_values", "_table")

    def __init__(self, names: Numbered, pairs: Iterable[tuple[str, int]], table: Sequence | None = None):
        numbered = sorted({names.of(name): value for name, value in pairs}.items())
        self._names, self._table = names, table
        self._numbers = array("q", (n for n, _ in numbered))
        self._values = array("q", (v for _, v in numbered))

    def __getitem__(self, name: str) -> Any:
        at = _find(self._numbers, self._names, name)
        if at is None:
            raise KeyError(name)
        value = self._values[at]
        return value if self._table is None else self._table[value]

    def __repr__(self) -> str:
        return f"HeldMap({dict(self.items())!r})"
