"""A level's union manifest on disk, rebuilt from the chunk manifests of its folder.

:func:`update_level` rebuilds ``<out>/<level>.level.json`` only when a chunk manifest
of its folder (or the level manifest itself) changed on disk since the level-outputs
record, under a lock on the folder (another cook may be rebuilding it), so cooking one
chunk keeps its level manifest whole.  It returns a :class:`LevelWrite`: whether the
file was rewritten, and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline.cache.store import Store
from pipeline.digest import stable_hash
from pipeline.outputs import atomic
from pipeline.outputs import manifest as mf
from pipeline.outputs.records import LEVEL_OUTPUTS, as_tuple, level_outputs_current, stat_of
from pipeline.outputs.sweep import level_files


@dataclass(frozen=True)
class LevelWrite:
    """What bringing one level manifest up to date did."""

    path: Path
    reason: str | None = None  # why it was rebuilt; None: recorded as current
    written: bool = False      # rewritten (a rebuild whose bytes are unchanged is not)


def update_level(level: str, fresh: Iterable[str], store: Store, out: Path, *, verify: bool = False) -> LevelWrite:
    """Bring the level manifest of ``level`` up to date; ``fresh``: its chunks this cook just wrote or
    checked (they win over a stale chunk of the level, :func:`pipeline.outputs.manifest.level_manifest`);
    ``verify``: trust no recorded stamp, rebuild it and compare."""
    path = mf.level_manifest_path(out, level)
    with atomic.locked(path.parent):  # another cook may be rebuilding this level manifest
        chunks_state = level_state(out, level)  # taken before reading: a later change is seen next time
        reason = level_outputs_current(as_tuple(store.get(LEVEL_OUTPUTS, str(path.resolve()))), chunks_state, path)
        if reason is None and not verify:
            return LevelWrite(path)
        reason = reason or "differs from its chunk manifests (cook --verify)"
        written = write_level_manifest(out, mf.level_manifest(level, level_chunks(out, level), fresh))
        store.set(LEVEL_OUTPUTS, str(path.resolve()), [chunks_state, stat_of(path)])
    return LevelWrite(path, reason, written)


def level_state(out: Path, level: str) -> str:
    """Stats of every chunk manifest a rebuild of the level manifest reads (itself excluded)."""
    return stable_hash([(str(p), stat_of(p)) for p in level_files(out, level)])


def level_chunks(out: Path, level: str) -> list[mf.ChunkManifest]:
    """Every chunk manifest of ``level`` on disk (this cook's and earlier ones)."""
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
