"""A level's union manifest on disk, kept up to date chunk by chunk.

:func:`update_level` rewrites ``<out>/<level>.level.json`` only when a chunk index of
its folder (or the level manifest itself) changed on disk since the ``level-outputs``
record, under a lock on the folder (another cook may be updating it).  It does not read
every chunk index again: the level manifest lists, per chunk, the keys (with draws) and
pipeline states the chunk uses, so the union is rebuilt from

- the chunks this cook built (``built``: their manifests in memory),
- the level manifest's own per-chunk entries for every index whose stamp is the one the
  record saw when the level manifest was last written,
- and only the other indexes (changed behind the cook's back, or never seen) read again.

Where it can, it does not rebuild the union either: it updates the document on disk,
carrying every unchanged chunk's rows over (:mod:`pipeline.outputs.level_delta`), so a
cook of one chunk costs a level of 250 chunks little more than a level of 25.  The record
also keeps how many chunk rows name each key and pipeline state of the file it describes:
the next update then leaves the unchanged rows as the JSON text they are, unparsed, unless
a position in the tables moves.

The result is the same bytes a rebuild from every index would give
(:func:`pipeline.outputs.manifest.level_manifest`).  It returns a :class:`LevelWrite`:
whether the file was rewritten, and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from pipeline.cache.store import Store
from pipeline.digest import stable_hash
from pipeline.outputs import atomic
from pipeline.outputs import level_delta, level_index
from pipeline.outputs import manifest as mf
from pipeline.outputs.records import LEVEL_OUTPUTS, as_tuple, level_outputs_current, stat_of
from pipeline.outputs.sweep import level_files


class LevelWrite(msgspec.Struct, frozen=True):
    """What bringing one level manifest up to date did."""

    path: Path
    reason: str | None = None  # why it was rebuilt; None: recorded as current
    written: bool = False      # rewritten (a rebuild whose bytes are unchanged is not)
    read: int = 0              # chunk indexes read to rebuild it


class Part(msgspec.Struct, frozen=True):
    """What one chunk gives its level: its keys, pipeline states and errors."""

    chunk: str
    keys: Mapping[str, mf.ManifestEntry]
    pipelines: Mapping[str, Mapping[str, Any]] = msgspec.field(default_factory=dict)
    errors: tuple[Mapping[str, Any], ...] = ()
    counts: Mapping[str, int] | None = None  # key text -> the chunk's draws (None: the entries' own)


def update_level(level: str, fresh: Iterable[str], store: Store, out: Path, *, verify: bool = False,
                 built: Mapping[str, Part | mf.ChunkManifest] | None = None) -> LevelWrite:
    """Bring the level manifest of ``level`` up to date; ``fresh``: its chunks this cook just wrote or
    checked (they win over a stale chunk of the level, :func:`pipeline.outputs.manifest.level_manifest`);
    ``built``: what those it built give the level (a :class:`Part` or the manifest), all of this level; ``verify``: trust no recorded stamp, rebuild it from
    every chunk index and compare."""
    path = mf.level_manifest_path(out, level)
    with atomic.locked(path.parent):  # another cook may be updating this level manifest
        stamps = {str(p): stat_of(p) for p in level_files(out, level)}  # taken before reading
        state = level_state_of(stamps)
        record = as_tuple(store.get(LEVEL_OUTPUTS, str(path.resolve())))
        reason = level_outputs_current(record, state, path)
        if reason is None and not verify:
            return LevelWrite(path)
        reason = reason or "differs from its chunk indexes (cook --verify)"
        made = None if verify else _delta(record, path, level, out, stamps, built or {})
        if made is not None:
            doc, users, read = made
            written = atomic.write_if_changed(path, mf.dump_json(doc))
        else:
            trusted = {} if verify else _trusted(record, path, out, stamps)
            parts, read = _parts(level, out, stamps, built or {}, trusted)
            manifest = mf.level_manifest(level, parts, fresh)
            written, users = write_level_manifest(out, manifest), level_index.users(manifest)
        # with the users of each key and pipeline state, the next update need not read the kept chunks' rows
        store.set(LEVEL_OUTPUTS, str(path.resolve()), [state, stat_of(path), stamps, users])
    return LevelWrite(path, reason, written, read)


def level_state(out: Path, level: str) -> str:
    """A digest of the stamps of every chunk index of the level (itself excluded)."""
    return level_state_of({str(p): stat_of(p) for p in level_files(out, level)})


def level_state_of(stamps: Mapping[str, Any]) -> str:
    return stable_hash(sorted(stamps.items()))


def _recorded(record, path: Path) -> bool:
    """The record names each index's stamp, and the level manifest on disk is the one it wrote."""
    return isinstance(record, tuple) and len(record) in (3, 4) and isinstance(record[2], Mapping) \
        and as_tuple(stat_of(path)) == as_tuple(record[1])


def _delta(record, path: Path, level: str, out: Path, stamps: Mapping[str, Any],
           built: Mapping[str, Any]) -> tuple[dict, level_delta.Users, int] | None:
    """The new document from the one on disk, the chunks whose index is as recorded carried over and
    every other one read or taken from ``built`` (:func:`pipeline.outputs.level_delta.level_update`,
    given the users the record holds), its users, and how many indexes were read; None: rebuild it."""
    if not _recorded(record, path):
        return None
    try:
        doc, union = mf.load_level_union(path, raw_rows=True)
    except mf.ManifestError:
        return None
    if not isinstance(doc.get("chunks"), dict):
        return None
    built_at = {str(mf.chunk_manifest_path(out, m.chunk)) for m in built.values()}
    kept, carried = [], set()
    for chunk in doc["chunks"]:
        try:
            index = str(mf.chunk_manifest_path(out, chunk))
        except mf.ManifestError:
            return None
        if index in stamps and index not in built_at \
                and as_tuple(record[2].get(index)) == as_tuple(stamps[index]):
            kept.append(chunk)
            carried.add(index)
    parts, read = _parts(level, out, {i: s for i, s in stamps.items() if i not in carried}, built, {})
    made = level_delta.level_update(doc, union, level, kept, parts, record[3] if len(record) > 3 else None)
    return None if made is None else (*made, read)


def _trusted(record, path: Path, out: Path, stamps: Mapping[str, Any]) -> dict[str, Part]:
    """Index path -> the chunk's part, from the level manifest on disk, for each index whose stamp is
    the one recorded when that manifest was written (a stale chunk is never trusted)."""
    if not _recorded(record, path):
        return {}  # no per-index stamps, or the level manifest is not the one last written
    try:
        old = mf.load_level_manifest(path)
    except mf.ManifestError:
        return {}
    stale = {e.get("chunk") for e in old.errors if e.get("message") == mf.STALE}
    errors: dict[str, list] = {}
    for e in old.errors:
        errors.setdefault(e.get("chunk"), []).append({k: v for k, v in e.items() if k != "chunk"})
    parts = {}
    for chunk, (keys, pipelines) in old.uses.items():
        index = str(mf.chunk_manifest_path(out, chunk))
        if chunk in stale or index not in stamps or as_tuple(record[2].get(index)) != as_tuple(stamps[index]):
            continue
        parts[index] = Part(chunk, {text: old.keys[text] for text in keys}, {pid: old.pipelines[pid] for pid in pipelines},
                            tuple(errors.get(chunk, ())), counts=keys)
    return parts


def _parts(level: str, out: Path, stamps: Mapping[str, Any], built: Mapping[str, Any],
           trusted: Mapping[str, Part]) -> tuple[list, int]:
    """Every chunk of the level as a part: built this cook, trusted from the level manifest, or read."""
    built_at = {str(mf.chunk_manifest_path(out, m.chunk)): m for m in built.values()}  # all of this level
    parts, read = [], 0
    for index in sorted(stamps):
        part = built_at.get(index) or trusted.get(index)
        if part is None:
            try:
                part = mf.load_chunk_manifest(index)
            except mf.ManifestError:
                continue
            read += 1
            if part.level != level:
                continue
        parts.append(part)
    return parts, read


def level_chunks(out: Path, level: str) -> list[mf.ChunkManifest]:
    """Every chunk index of ``level`` on disk (this cook's and earlier ones)."""
    manifests = []
    for path in level_files(out, level):
        try:
            manifest = mf.load_chunk_manifest(path)
        except mf.ManifestError:
            continue
        if manifest.level == level:
            manifests.append(manifest)
    return manifests


def write_level_manifest(out: Path | str, manifest: mf.LevelManifest) -> bool:
    """Write ``<out>/<level>.level.json`` unless unchanged; True when rewritten."""
    return atomic.write_if_changed(mf.level_manifest_path(out, manifest.level), mf.dump_json(manifest.to_json()))
