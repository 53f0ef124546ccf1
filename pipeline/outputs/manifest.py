"""Chunk indexes and level manifests: which permutation keys a chunk (or level) uses, and their blobs.

Files (``<out>`` is the cook's output folder, ``--out``, default ``build/``):

- ``<out>/shaders.pak``: the folder's shader library, every blob once with its reflection
  (:mod:`pipeline.outputs.pak`, kept by :mod:`pipeline.outputs.write_library`).
- ``<out>/<chunk>.json``: the chunk index, compact JSON of tables and indexes into them
  (:mod:`pipeline.outputs.chunk_index`): the chunk's keys, the blobs they use (by hash, in
  the library), its draws with key and pipeline state per pass, its pipeline states, its
  fallbacks and errors.  In memory it is a :class:`ChunkManifest`, whose ``reflection`` is
  filled from the library by :func:`pipeline.outputs.read_outputs.load_chunk`.
- ``<out>/<level>.level.json``: the level's union manifest::

    {"format": 5, "level": "forest", "library": "shaders.pak",
     "chunks": {"forest/c00": {"index": "forest/c00.json", "keys": [key, draws, ...], "pipelines": [...]}},
     "keys": {"<key text>": {... as in a chunk, draws summed, "chunks": [names]}},
     "errors": [{..., "chunk": name}], "pipelines": {id: {...}}}

  The ``.level.json`` suffix cannot collide with a chunk index because a chunk
  whose last path component ends in ``.level`` is refused (:func:`check_name`).
  Paths inside a manifest are relative to the folder holding it.

- The library holds every blob of every chunk index in the folder at every instant:
  before a cook renames a chunk index into place, the library already holds its blobs
  (grown first), and blobs no index names are dropped only after (:mod:`pipeline.outputs.write_library`).
- The chunk ``.`` (glTF files directly in the world root) and its level ``.``
  write ``<out>/.root.json`` and ``<out>/.root.level.json`` (no chunk is named ``.root``:
  hidden folders are never chunks).

Every file is deterministic compact JSON: UTF-8, sorted keys, no indentation, trailing
newline; lists are sorted.  ``format`` is bumped on any incompatible change; a reader
refuses another format with :class:`ManifestVersionError`.  ``pipeline show FILE`` prints
one expanded and indented.  See docs/formats.md.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import orjson

from pipeline.errors import PipelineError
from pipeline.fileio import read_regular
from pipeline.keys.key import PermutationKey
from pipeline.keys.required import KeyUses
from pipeline.outputs import chunk_index, level_index
from pipeline.digest import sorted_unique as _sorted_unique
from pipeline.outputs.pak import LIBRARY_NAME
from pipeline.structs import replace

stage_hashes = chunk_index.stage_hashes  # every stage blob hash a manifest names
FORMAT_VERSION = 5  # 5: a level manifest's chunk rows list [key, draws, ...] flat; 4: compact chunk indexes
ROOT = "."            # the chunk (and level) of glTF files directly in the world root
ROOT_STEM = ".root"   # the file name its outputs use
_PAK_NAME = re.compile(r"^(?P<stem>.+)\.(?P<hex>[0-9a-f]{16})\.pak$")  # format 3's per-chunk paks
MAX_MANIFEST_BYTES = 1 << 30
LEVEL_SUFFIX = ".level"
Scalar = bool | int | str


class ManifestError(PipelineError):
    """A manifest cannot be built, written or read."""


class ManifestVersionError(ManifestError):
    """A manifest was written by a newer format version than this reader knows."""


# ------------------------------------------------------------------ data
class SpecConstant(msgspec.Struct, frozen=True):
    """A specialization-constant feature of a key: its id and the values draws use."""

    constant_id: int
    values: tuple[Scalar, ...] = ()

    def to_json(self) -> dict:
        return {"constant_id": self.constant_id, "values": _sorted_unique(self.values)}


class ManifestEntry(msgspec.Struct, frozen=True):
    """One permutation key of a chunk (or level) and its compiled stages."""

    key: str
    hash: str
    shader: str
    pass_name: str
    features: Mapping[str, Scalar]
    stages: Mapping[str, str]
    draws: int
    render_states: tuple[Mapping[str, Any], ...] = ()
    specialization: Mapping[str, SpecConstant] = msgspec.field(default_factory=dict)
    chunks: tuple[str, ...] = ()  # level manifests only
    targets: Mapping[str, Mapping[str, str]] | None = None  # target label -> stage -> blob (families naming targets)

    @classmethod
    def of(cls, key: PermutationKey, uses: KeyUses, stages: Mapping[str, str], constant_ids: Mapping[str, int],
           targets: Mapping[str, Mapping[str, str]] | None = None, shared: dict | None = None) -> "ManifestEntry":
        """The entry of ``key`` from what it is used for (:class:`~pipeline.keys.required.KeyUses`): its draw
        count, render states and specialization values (``constant_ids``: the family's, by feature).
        ``shared``: kept by the caller across the entries it makes (a cook's chunks share their key and
        specialization values objects): the entries of one key object share one ``features`` and those of
        one specialization values object one ``specialization`` (nobody changes either)."""
        values, spec, features = uses.specialization, None, None
        if shared is not None:
            found = shared.get((id(values), id(constant_ids)))
            if found is not None and found[0] is values and found[1] is constant_ids:
                spec = found[2]
            found = shared.get(id(key))
            if found is not None and found[0] is key:
                features = found[1]
        if spec is None:
            spec = {name: SpecConstant(constant_ids[name], tuple(v)) for name, v in values.items()}
            if shared is not None:  # kept alive with it: their ids stay theirs
                shared[(id(values), id(constant_ids))] = (values, constant_ids, spec)
        if features is None:
            features = dict(key.features)
            if shared is not None:
                shared[id(key)] = (key, features)
        return cls(key=key.text, hash=key.hash, shader=key.shader, pass_name=key.pass_name,
                   features=features, stages=stages, draws=uses.draw_count,
                   render_states=tuple(uses.render_states), specialization=spec, targets=targets)

    def to_json(self, *, with_chunks: bool = False) -> dict:
        doc = {
            "hash": self.hash, "shader": self.shader, "pass": self.pass_name,
            "features": dict(self.features), "stages": dict(self.stages), "draws": self.draws,
            "render_states": _sorted_unique(dict(s) for s in self.render_states),
            "specialization": {k: v.to_json() for k, v in self.specialization.items()},
        }
        if self.targets is not None:
            doc["targets"] = {t: dict(stages) for t, stages in self.targets.items()}
        if with_chunks:
            doc["chunks"] = sorted(set(self.chunks))
        return doc


class ChunkManifest(msgspec.Struct, frozen=True):
    chunk: str
    level: str
    keys: Mapping[str, ManifestEntry]
    errors: tuple[Mapping[str, Any], ...] = ()
    # the runtime contract (pipeline.outputs.contract): draws, pipeline states, blob reflection, fallback keys
    draws: tuple[Mapping[str, Any], ...] = ()
    pipelines: Mapping[str, Mapping[str, Any]] = msgspec.field(default_factory=dict)
    reflection: Mapping[str, Mapping[str, Any]] = msgspec.field(default_factory=dict)  # kept in the library, not the index
    fallbacks: Mapping[str, str] = msgspec.field(default_factory=dict)

    @property
    def library(self) -> str:
        """The shader library's path from the folder holding this chunk's index."""
        return "../" * output_stem(self.chunk).count("/") + LIBRARY_NAME

    def to_json(self) -> dict:
        return {"format": FORMAT_VERSION, **chunk_index.encode(self, self.library)}


class LevelManifest(msgspec.Struct, frozen=True):
    """A level's union of its chunks: keys (draws summed, the chunks using each; render states and
    specialization values are those of its pipeline states), the PSO list, errors, and per chunk
    what it uses (``uses``: chunk -> ({key text: draws}, pipeline ids)), which lets a cook of one
    chunk update the level without reading the others (:mod:`pipeline.outputs.write_level`)."""

    level: str
    chunks: tuple[str, ...]
    keys: Mapping[str, ManifestEntry]
    errors: tuple[Mapping[str, Any], ...] = ()
    pipelines: Mapping[str, Mapping[str, Any]] = msgspec.field(default_factory=dict)  # union of the chunks' states
    uses: Mapping[str, tuple[Mapping[str, int], tuple[str, ...]]] = msgspec.field(default_factory=dict)

    @property
    def library(self) -> str:
        """The shader library's path from the folder holding the level manifest."""
        return "../" * output_stem(self.level).count("/") + LIBRARY_NAME

    def index_path(self, chunk: str) -> str:
        """A chunk's index path from the folder holding the level manifest."""
        start = posixpath.dirname(output_stem(self.level)) or "."
        return posixpath.relpath(output_stem(chunk), start) + ".json"

    def to_json(self) -> dict:
        return {"format": FORMAT_VERSION, **level_index.encode_level(self)}


# ------------------------------------------------------------------ building
def chunk_manifest(chunk: str, level: str, entries: Iterable[ManifestEntry],
                   errors: Iterable[Mapping[str, Any]] = (), **contract: Any) -> ChunkManifest:
    """A chunk manifest from entries; entries with the same key text are merged.  ``contract``:
    the runtime contract fields (draws, pipelines, reflection, fallbacks)."""
    check_name(chunk, "chunk")
    check_name(level, "level")
    return ChunkManifest(chunk, level, _merge_all(entries), tuple(errors), **contract)


STALE = "stale: cooked from other shader sources or another compiler than the rest of its level; cook it again"


def level_manifest(level: str, chunks: Iterable[Any], fresh: Iterable[str] = ()) -> LevelManifest:
    """The union of a level's chunks (each a :class:`ChunkManifest`, or anything with its ``chunk``,
    ``keys``, ``pipelines`` and ``errors``, and optionally ``counts``: key text -> draws, which then
    stand for the entries' own): keys merged, draws summed.

    When two chunks name different stage blobs for one key (one was cooked after a
    shader or compiler change, the other not yet), the chunk in ``fresh`` (just
    cooked) wins, else the first by name; the other chunk's entries and pipeline states
    are left out and the chunk is listed in ``errors`` as stale.
    """
    check_name(level, "level")
    fresh = set(fresh)
    chunks = sorted(chunks, key=lambda m: (m.chunk not in fresh, m.chunk))
    base: dict[str, ManifestEntry] = {}
    draws: dict[str, int] = {}
    users: dict[str, list[str]] = {}
    uses: dict[str, tuple] = {}
    stale: set[str] = set()
    for m in chunks:
        if any(e.key in base and base[e.key].stages != e.stages for e in m.keys.values()):
            stale.add(m.chunk)
            uses[m.chunk] = ({}, ())
            continue
        counts = getattr(m, "counts", None) or {text: e.draws for text, e in m.keys.items()}
        for text, entry in m.keys.items():
            old = base.setdefault(text, entry)
            if old is not entry:
                same_key(old, entry)
            draws[text] = draws.get(text, 0) + counts[text]
            users.setdefault(text, []).append(m.chunk)
        uses[m.chunk] = (dict(counts), tuple(sorted(m.pipelines)))
    merged = {text: replace(base[text], draws=draws[text], chunks=tuple(sorted(users[text])), render_states=(),
                            specialization={}) for text in sorted(base)}
    errors = [{**e, "chunk": m.chunk} for m in chunks for e in m.errors]
    errors = _sorted_unique([*errors, *({"chunk": c, "message": STALE} for c in sorted(stale))])
    pipelines = {pid: doc for m in chunks if m.chunk not in stale for pid, doc in m.pipelines.items()}
    return LevelManifest(level, tuple(sorted(m.chunk for m in chunks)), merged, tuple(errors),
                         dict(sorted(pipelines.items())), uses)


def same_key(a: ManifestEntry, b: ManifestEntry) -> None:
    """Two chunks' entries of one key text agree on what the key is."""
    for name in ("hash", "shader", "pass_name", "features", "targets"):
        if getattr(a, name) != getattr(b, name):
            raise ManifestError.at(a.key, f"conflicting '{name}' for the same key")


def merge_entries(a: ManifestEntry, b: ManifestEntry) -> ManifestEntry:
    """Two uses of one key: draws summed, render states, values and chunks united."""
    for name in ("hash", "shader", "pass_name", "features", "stages", "targets"):
        if getattr(a, name) != getattr(b, name):
            raise ManifestError.at(a.key, f"conflicting '{name}' for the same key")
    return replace(a, draws=a.draws + b.draws, render_states=a.render_states + b.render_states,
                   specialization=_merge_spec(a, b), chunks=a.chunks + b.chunks)


def _merge_spec(a: ManifestEntry, b: ManifestEntry) -> dict[str, SpecConstant]:
    merged = dict(a.specialization)
    for name, spec in b.specialization.items():
        old = merged.get(name)
        if old is not None and old.constant_id != spec.constant_id:
            raise ManifestError.at(a.key, f"conflicting constant_id for {name}")
        merged[name] = SpecConstant(spec.constant_id, (old.values if old else ()) + spec.values)
    return merged


def _merge_all(entries: Iterable[ManifestEntry]) -> dict[str, ManifestEntry]:
    merged: dict[str, ManifestEntry] = {}
    for entry in entries:
        merged[entry.key] = merge_entries(merged[entry.key], entry) if entry.key in merged else entry
    return merged


def check_name(name: str, what: str) -> None:
    """Refuse names that would escape ``<out>`` or collide with a level manifest (``.`` is the root chunk)."""
    if name == ROOT:
        return
    parts = name.split("/")
    if not name or any(p in ("", ".", "..") or "\\" in p for p in parts):
        raise ManifestError.at(name or "<empty>", f"invalid {what} name {name!r}")
    if parts[-1].endswith(LEVEL_SUFFIX):
        raise ManifestError.at(name, f"{what} name {name!r} ends in '{LEVEL_SUFFIX}', "
                               "which is reserved for level manifests")


# ------------------------------------------------------------------ bytes and paths
def dump_json(doc: Mapping[str, Any]) -> bytes:
    """Deterministic compact JSON bytes: sorted keys, no indentation, trailing newline."""
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def dump_pretty(doc: Mapping[str, Any]) -> bytes:
    """The same document for people: sorted keys, 2-space indent, trailing newline."""
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def output_stem(name: str) -> str:
    """The path (without suffix) a chunk's or level's outputs use under ``<out>``."""
    return ROOT_STEM if name == ROOT else name


def chunk_manifest_path(out: Path | str, chunk: str) -> Path:
    check_name(chunk, "chunk")
    return Path(out) / f"{output_stem(chunk)}.json"


def library_path(out: Path | str) -> Path:
    """The output folder's shader library."""
    return Path(out) / LIBRARY_NAME


def level_manifest_path(out: Path | str, level: str) -> Path:
    check_name(level, "level")
    return Path(out) / f"{output_stem(level)}{LEVEL_SUFFIX}.json"


def pak_stem(name: str) -> str | None:
    """The chunk file name a per-chunk pak of format 3 belonged to (``c00`` for ``c00.<hex>.pak``)."""
    match = _PAK_NAME.match(name)
    return match["stem"] if match else None


def module_hashes(manifest: ChunkManifest) -> frozenset[str]:
    """The stage blobs a Vulkan runtime makes shader modules of: the ``stages`` of keys whose
    stages are Vulkan SPIR-V (no compile targets named, or a Vulkan one among them)."""
    return frozenset(h for e in manifest.keys.values()
                     if e.targets is None or any(t.startswith("vulkan") for t in e.targets)
                     for h in e.stages.values())


# ------------------------------------------------------------------ reading
def load_chunk_manifest(path: Path | str) -> ChunkManifest:
    """Read and check a chunk index (its ``reflection`` is left empty: it is in the library);
    raises ManifestError / ManifestVersionError."""
    doc = _load(path)
    where = _Where(str(path))
    fields = chunk_index.decode(doc, where, _index_entry)
    return ChunkManifest(where.get(doc, "chunk", str), where.get(doc, "level", str), **fields)


def _index_entry(specialization: Any, **fields: Any) -> ManifestEntry:
    """One entry of a chunk index (its specialization checked by the decoder)."""
    spec = {n: SpecConstant(s["constant_id"], tuple(s["values"])) for n, s in specialization.items()}
    return ManifestEntry(specialization=spec, **fields)


def load_level_manifest(path: Path | str) -> LevelManifest:
    """Read and check a level manifest; raises ManifestError / ManifestVersionError."""
    doc = _load(path)
    where = _Where(str(path))
    return LevelManifest(where.get(doc, "level", str), **level_index.decode_level(doc, where, _index_entry))


def load_level_union(path: Path | str, raw_rows: bool = False) -> tuple[dict, dict]:
    """A level manifest's document and its union's fields (:func:`pipeline.outputs.level_index.decode_union`),
    its per-chunk rows left as written (``raw_rows``: not even parsed, :func:`level_index.raw_rows`);
    raises ManifestError / ManifestVersionError."""
    doc = _load(path, level_index.raw_rows if raw_rows else orjson.loads)
    _Where(str(path)).get(doc, "level", str)
    return doc, level_index.decode_union(doc, _Where(str(path)), _index_entry)


def _load(path: Path | str, parse: Callable[[bytes], Any] = orjson.loads) -> dict:
    data = read_regular(path, str(path), limit=MAX_MANIFEST_BYTES, error=ManifestError, what="manifest")
    try:
        doc = parse(data)
    except ValueError as exc:  # orjson's and msgspec's decode errors are ValueErrors
        raise ManifestError.at(str(path), f"manifest is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("format"), int):
        raise ManifestError.at(str(path), "not a manifest (no integer 'format')", pointer="/format")
    if doc["format"] != FORMAT_VERSION:
        raise ManifestVersionError.at(str(path), f"manifest format {doc['format']} is not supported "
                                      f"(this reader knows format {FORMAT_VERSION}); rebuild the outputs",
                                      pointer="/format")
    return doc


class _Where(msgspec.Struct, frozen=True):
    """A file plus a JSON pointer, for located errors while reading."""

    file: str
    pointer: str = ""

    def at(self, *parts: str) -> "_Where":
        escaped = (p.replace("~", "~0").replace("/", "~1") for p in parts)
        return _Where(self.file, self.pointer + "".join("/" + p for p in escaped))

    def get(self, doc: dict, name: str, kind: type) -> Any:
        value = doc.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.at(name).error(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    def error(self, message: str) -> ManifestError:
        return ManifestError.at(self.file, message, pointer=self.pointer)
