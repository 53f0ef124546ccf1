"""A chunk's keys read back from its records, held as compactly as the records give them.

A cook's process holds every chunk's keys from its ``chunk-keys`` record until its outputs
are written: at 100,000 files that is about 340,000 (chunk, key) uses.  :class:`RecordedKeys`
holds them as a few arrays per chunk (each key's position, draw count, render states and
specialization values) and makes a :class:`RecordedUses` only for a key someone asks for;
the draws of a key are read from the ``chunk-draws`` record (:class:`StoredDraws`) only
when its bindings are asked for, in whichever process asks.
"""

from __future__ import annotations

import errno
import os
from array import array
from collections.abc import Iterator, Mapping

from pipeline.cache.store import Store
from pipeline.facts import DrawSource
from pipeline.keys.key import PermutationKey
from pipeline.keys.records import CHUNK_DRAWS
from pipeline.keys.required import DRAW_FIELDS, KeyUses


class RecordedKeys(Mapping):
    """key -> :class:`RecordedUses` of one chunk read back from its record (``keys``: each once).  A
    key's uses are made when first asked for and kept until :meth:`release`; the key -> position table
    is made on the first look-up (iterating needs none).  Nobody changes it: a writer copies it
    (``dict(...)``)."""

    __slots__ = ("_source", "_keys", "_counts", "_states", "_specs", "_at", "_made")

    def __init__(self, source: "StoredDraws", keys: list[PermutationKey], counts: list[int],
                 states: list[list[dict]], specs: list[dict]):
        self._source, self._keys, self._counts = source, tuple(keys), array("q", counts)
        self._states, self._specs = tuple(states), tuple(specs)
        self._at: dict[str, int] | None = None  # a key's hash text -> its position
        self._made: dict[int, RecordedUses] | None = None

    def _position(self, key: object) -> int | None:
        """Where ``key`` is, by its hash text, which the draws record names the keys by (a
        PermutationKey's own hash is a Python call: looking every key of every chunk up by it costs
        the cook more than the look-ups)."""
        at = self._at
        if at is None:
            hashes = self._source.hashes  # each key's, in order
            at = self._at = dict(zip(hashes, range(len(hashes))))
        return at.get(key.hash) if isinstance(key, PermutationKey) else None

    def __getitem__(self, key: PermutationKey) -> "RecordedUses":
        i = self._position(key)
        if i is None:
            raise KeyError(key)
        made = self._made
        if made is None:
            made = self._made = {}
        uses = made.get(i)
        if uses is None:
            uses = made[i] = RecordedUses(self._source, i, self._counts[i], self._states[i], self._specs[i])
        return uses

    def __contains__(self, key: object) -> bool:
        return self._position(key) is not None

    def __iter__(self) -> Iterator[PermutationKey]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"RecordedKeys({len(self._keys)} keys of chunk {self._source.chunk[0]!r})"

    def release(self) -> None:
        """Forget the uses and draws made (they are made again from the records when asked for)."""
        self._at = self._made = None
        self._source.release()


class ExtendedKeys(Mapping):
    """A chunk's keys with keys added to it (fallback keys, say), the chunk's own left as they are:
    copying them into a dict would make every one of their uses."""

    __slots__ = ("base", "added")

    def __init__(self, base: Mapping, added: Mapping):
        self.base, self.added = base, dict(added)

    def __getitem__(self, key: PermutationKey) -> KeyUses:
        found = self.added.get(key)
        return self.base[key] if found is None else found

    def __contains__(self, key: object) -> bool:
        return key in self.added or key in self.base

    def __iter__(self) -> Iterator[PermutationKey]:
        yield from self.base
        yield from (k for k in self.added if k not in self.base)

    def __len__(self) -> int:
        return len(self.base) + sum(1 for k in self.added if k not in self.base)

    def release(self) -> None:
        release_uses(self.base)
        release_uses(self.added)


def release_uses(uses: Mapping) -> None:
    """Let go of the draws (and uses) a chunk's keys made: they are made again when asked for."""
    release = getattr(uses, "release", None)
    if release is not None:
        release()
        return
    for one in uses.values():
        one.release()


class StoredDraws:
    """A chunk's ``chunk-draws`` record, read on first use, in whichever process asks (a forked
    worker opens the store on its own: never its parent's connection)."""

    def __init__(self, store: Store | None, fingerprint: str | None):
        self.store, self.fingerprint, self.pid = store, fingerprint, os.getpid()
        self.chunk: tuple[str, str | None] = ("", None)
        self.hashes: list[str] = []
        self._data: dict | None = None
        self._sources: dict[int, object] = {}  # a draw of several keys (one per pass) is one DrawSource

    @classmethod
    def holding(cls, record: dict) -> "StoredDraws":
        held = cls(None, None)
        held._data = record
        return held

    def bindings(self, i: int, count: int) -> list:
        """Key ``i``'s bindings, its draws made (each once per chunk); the draws of one render state
        (or specialization values) share one dict of it, which nobody changes."""
        if self._data is None:
            self._data = self._read()
        data = self._data
        raw = data["bindings"][i]
        if len(raw) != 3 * count:
            raise ValueError("a chunk-draws record whose bindings are not one per draw")
        draws, states, specs, sources = data["draws"], data["render_states"], data["specializations"], self._sources
        name, level = self.chunk
        made = []
        for n, state, spec in zip(raw[0::3], raw[1::3], raw[2::3]):
            source = sources.get(n)
            if source is None:
                source = sources[n] = RecordedDraw(draws[n], name, level)
            made.append((source, states[state], specs[spec]))
        return made

    def release(self) -> None:
        """Forget what was read (a cook reads each chunk's draws once, to write its outputs)."""
        if self.fingerprint is not None:
            self._data, self._sources = None, {}

    def _read(self) -> dict:
        store = self.store
        if self.pid != os.getpid() and store.on_disk:
            store = _process_store(store.directory)
        data = store.get(CHUNK_DRAWS, self.fingerprint)
        if not isinstance(data, dict) or data.get("keys") != self.hashes:
            raise OSError(errno.ENOENT, f"the cache no longer holds the draws of chunk {self.chunk[0]!r} "
                                        "(cleared during the cook?); cook again", str(store.directory))
        return data


class RecordedDraw:
    """A draw a chunk record names, as its :class:`~pipeline.facts.DrawSource` reads (the same fields, equal
    to it), made without validation: its values were validated when the draw was first scanned, and a
    chunk's outputs make one per draw."""

    __slots__ = ("file", "node", "mesh", "primitive", "material", "variant", "chunk", "level")
    _FIELDS = (*DRAW_FIELDS, "chunk", "level")

    def __init__(self, ident, chunk: str, level: str | None):
        self.file, self.node, self.mesh, self.primitive, self.material, self.variant = ident
        self.chunk, self.level = chunk, level

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RecordedDraw, DrawSource)):
            return self._values() == tuple(getattr(other, name) for name in self._FIELDS)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"RecordedDraw({', '.join(f'{n}={getattr(self, n)!r}' for n in self._FIELDS)})"


_STORES: dict[tuple[int, str], Store] = {}


def _process_store(directory) -> Store:
    """This process's own connection to the store at ``directory``."""
    at = (os.getpid(), str(directory))
    if at not in _STORES:
        _STORES[at] = Store(directory)
    return _STORES[at]


class RecordedUses(KeyUses):
    """:class:`KeyUses` read back from a chunk record, its draws made on first use: a cook whose chunk
    outputs are current needs the render states and specialization values, never the draws, and a
    cook's own process never needs them when its workers write the outputs."""

    def __init__(self, source: StoredDraws, index: int, count: int, render_states: list[dict],
                 specialization: dict[str, list]):
        self._source, self._index, self._count, self._made = source, index, count, None
        self.render_states, self.specialization, self.trace = render_states, specialization, None

    def _bindings(self) -> list:
        if self._made is None:
            self._made = self._source.bindings(self._index, self._count)
        return self._made

    @property
    def draw_count(self) -> int:
        return self._count

    def release(self) -> None:
        """Forget the draws made (they are made again from the record when asked for)."""
        self._made = None
        self.__dict__.pop("_draws", None)
        self._source.release()

    @property
    def bindings(self) -> list:
        return self._bindings()

    @bindings.setter
    def bindings(self, value: list) -> None:
        self._made = value

    @property
    def draws(self) -> list:
        if "_draws" not in self.__dict__:
            self.__dict__["_draws"] = [d for d, _, _ in self._bindings()]
        return self.__dict__["_draws"]

    @draws.setter
    def draws(self, value: list) -> None:
        self.__dict__["_draws"] = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeyUses):
            return NotImplemented
        return (self.draws, self.render_states, self.specialization, self.bindings) == \
            (other.draws, other.render_states, other.specialization, other.bindings)

    __hash__ = None  # type: ignore[assignment]


