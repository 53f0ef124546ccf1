"""Finding the chunks of a world folder (the world itself is :class:`pipeline.world.World`).

A world is a folder.  A *chunk* is a folder that directly holds ``.gltf`` or
``.glb`` files; its name is its path from the world root, '/'-separated (``.``
for files directly in the root).  Its *level* is the first ``level_depth``
components of that name (the whole name when it is shorter).  Hidden folders
(``.git``, ``.cache`` ...) are skipped and folder symlinks are not followed, so a
link loop cannot hang discovery.

Grid-chunked levels (``chunking = {grid = ...}`` in pipeline.toml) are still
discovered by folder here; the scanner assigns their draws to grid cells.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import WorldConfig

GLTF_SUFFIXES = (".gltf", ".glb")
ROOT_CHUNK = "."  # the chunk of files directly in the world root


@dataclass(frozen=True)
class ChunkInfo:
    """One chunk: ``files`` are relative to the world root, '/'-separated, sorted."""

    name: str
    level: str
    directory: Path
    files: tuple[str, ...]


def is_gltf_name(name: str) -> bool:
    return name.lower().endswith(GLTF_SUFFIXES)


def chunk_name(relative_dir: str) -> str:
    return relative_dir if relative_dir not in ("", ".") else ROOT_CHUNK


def discover(root: Path, config: WorldConfig, under: str = "") -> list[ChunkInfo]:
    """Every chunk under ``root`` (or only under its sub-folder ``under``), sorted by name."""
    root = Path(root)
    chunks = [_chunk(root, rel, names, config) for rel, names in _walk(root, under.strip("/"))]
    return sorted(chunks, key=lambda c: c.name)


def _chunk(root: Path, rel: str, names: list[str], config: WorldConfig) -> ChunkInfo:
    name = chunk_name(rel)
    prefix = f"{rel}/" if rel else ""
    files = tuple(sorted(prefix + n for n in names))
    return ChunkInfo(name, config.level_of(name), root / rel if rel else root, files)


def _walk(root: Path, rel: str):
    """Yield (relative folder, glTF file names) for every folder holding glTF files."""
    try:
        entries = sorted(os.scandir(root / rel if rel else root), key=lambda e: e.name)
    except OSError:
        return
    files, folders = [], []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if is_gltf_name(entry.name):
            files.append(entry.name)  # even a folder, FIFO or broken link: reading it reports why it is bad
        elif entry.is_dir(follow_symlinks=False):
            folders.append(entry.name)
    if files:
        yield rel, files
    for folder in folders:
        yield from _walk(root, f"{rel}/{folder}" if rel else folder)
