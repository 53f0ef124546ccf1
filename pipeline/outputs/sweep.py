"""Outputs no cook would write any more: those of chunks and levels that no longer exist.

A cook of a whole world (or of one level) knows every chunk it covers, so after
writing it removes, under ``<out>``, what belongs to no such chunk:

- a chunk index whose chunk is not in the world (or, for a level cook, whose
  level is that level and whose chunk is not in it);
- a per-chunk pak of an earlier output format (``<name>.<16 hex>.pak`` or ``<name>.pak``,
  its bytes starting with the pak magic) beside a chunk index: the blobs now live in the
  folder's one shader library, ``<out>/shaders.pak``, which the sweep never removes (the
  cook settles it to the indexes left, :mod:`pipeline.outputs.write_library`);
- for a whole-world sweep, a level manifest of a level that no longer exists.

Only files the pipeline recognises as its own outputs are removed: a file that does
not read as a chunk index of this format, or a name of another pattern, is left alone.  Each folder is
swept under the same lock cooks take to write into it, and only when a look without
the lock found something to remove (a no-op cook takes no lock).  A manifest the cook
has just written or checked (``known``: its path, chunk, pak and file signature) is not
parsed again while its signature holds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.outputs.atomic import locked
from pipeline.outputs.pak import file_version
from pipeline.stamps import stamp_of, why_dirty

LEVEL_JSON = mf.LEVEL_SUFFIX + ".json"


def level_files(out: Path, level: str) -> list[Path]:
    """Every file that may hold a chunk manifest of ``level``: ``<out>/<level>.json`` and those under
    ``<out>/<level>/`` (so the chunk named like its level belongs to it), sorted."""
    if level == mf.ROOT:
        named = mf.chunk_manifest_path(out, mf.ROOT)
        return [named] if named.is_file() else []
    named = os.path.join(out, f"{level}.json")
    found = [named] if os.path.isfile(named) else []
    for folder, _dirs, files in os.walk(os.path.join(out, level)):  # one listing a folder, no stat a file
        found += [os.path.join(folder, n) for n in files if n.endswith(".json") and not n.endswith(LEVEL_JSON)]
    return sorted(map(Path, found))


Known = Mapping[str, tuple[str, tuple]]  # index path -> (chunk, file_signature)


def file_signature(path: Path | str) -> tuple | None:
    """The :mod:`pipeline.stamps` stamp of a file, or None when it cannot be stat'ed."""
    return stamp_of(path)


def sweep_outputs(out: Path | str, chunk_levels: dict[str, str], scope: str = "",
                  known: Known | None = None, dry: bool = False) -> list[Path]:
    """Remove the outputs under ``out`` of chunks not in ``chunk_levels``; returns what was removed
    (``dry``: what would be, nothing removed).

    ``scope`` is ``""`` for a whole world, else the one level the cook covered.
    """
    out = Path(out)
    if not out.is_dir():
        return []
    removed: list[Path] = []
    # a level manifest where a level of the world writes its own is that level's: not read to be sure
    current = {mf.level_manifest_path(out, level) for level in set(chunk_levels.values())} if not scope else set()
    for folder, dirs, files in os.walk(out):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if any(n.endswith((".json", ".pak")) for n in files) \
                and (found := _sweep_folder(Path(folder), chunk_levels, scope, known or {}, current, dry=True)):
            if dry:
                removed += found
                continue
            with locked(folder):  # decided again under the lock: another cook may have written since
                removed += _sweep_folder(Path(folder), chunk_levels, scope, known or {}, current)
    return removed


def _read(path: Path, chunk_levels: dict[str, str], known: Known) -> tuple[str, str] | None:
    """(chunk, level) of a chunk index, or None when it is not one of ours."""
    entry = known.get(str(path))
    if entry is not None and entry[0] in chunk_levels and why_dirty(entry[1], stamp_of(path)) is None:
        return entry[0], chunk_levels[entry[0]]
    try:
        manifest = mf.load_chunk_manifest(path)
    except mf.ManifestError:
        return None  # not ours, or of another format: left alone
    return manifest.chunk, manifest.level


def _sweep_folder(folder: Path, chunk_levels: dict[str, str], scope: str, known: Known, current: set[Path],
                  dry: bool = False) -> list[Path]:
    """Remove what no cook would write from one folder (``dry``: only say what that would be)."""
    listed: set[Path] = set()  # a dry sweep's removals, each said once as the sweep would remove it once

    def unlink(path: Path) -> list[Path]:
        if not dry:
            return _unlink(path)
        if path in listed or not path.exists():
            return []
        listed.add(path)
        return [path]

    names = sorted(os.listdir(folder))
    levels = set(chunk_levels.values())
    removed, scoped_stems = [], set()
    for name in names:
        path = folder / name
        if name.endswith(LEVEL_JSON):
            if not scope and path not in current and _level_gone(path, levels):
                removed += unlink(path)
            continue
        if not name.endswith(".json") or (read := _read(path, chunk_levels, known)) is None:
            continue
        chunk, level = read
        in_scope = not scope or level == scope
        if in_scope:
            scoped_stems.add(path.stem)
        if in_scope and chunk not in chunk_levels:
            removed += unlink(path)
    for name in names:
        if not name.endswith(".pak"):
            continue
        stem = mf.pak_stem(name) or name[:-len(".pak")]
        if (not scope or stem in scoped_stems) and _old_pak(folder / name):
            removed += unlink(folder / name)  # a per-chunk pak of format 3 or earlier
    return removed


def _old_pak(path: Path) -> bool:
    """A pak of the per-chunk kind (version 1, output format 3): never the library (version 2)."""
    return file_version(path) == 1


def _level_gone(path: Path, levels: set[str]) -> bool:
    try:
        return mf.load_level_manifest(path).level not in levels
    except mf.ManifestError:
        return False


def _unlink(path: Path) -> list[Path]:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return []
    return [path]
