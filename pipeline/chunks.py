"""Finding the chunks of a world folder (the world itself is :class:`pipeline.world.World`).

The chunk layout is part of the world, known before anything is scanned: the world
selects chunks by it, and the scanner (:mod:`pipeline.scan`) reads the files it lists.

A world is a folder.  A *chunk* is a folder that directly holds ``.gltf`` or
``.glb`` files; its name is its path from the world root, '/'-separated (``.``
for files directly in the root).  Its *level* is the first ``level_depth``
components of that name (the whole name when it is shorter).  Hidden folders
(``.git``, ``.cache`` ...) are skipped.

A folder symlink is followed when it leads inside the world or inside one of its
``allowed_roots``, and its chunks are named by the link's path.  Every real folder is
walked once: the folders reached without links come first, then links in name order,
and a link to a folder already walked (a loop, or a second way to the same folder)
is not followed.  A link that is not followed is one warning located at the link, so
nothing is left out in silence; :func:`discover_folders` returns them.

Grid-chunked levels (``chunking = {grid = ...}`` in pipeline.toml) are still
discovered by folder here; the scanner assigns their draws to grid cells.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from pipeline.config import WorldConfig
from pipeline.errors import Diagnostic, Location

GLTF_SUFFIXES = (".gltf", ".glb")
ROOT_CHUNK = "."  # the chunk of files directly in the world root


class ChunkInfo(msgspec.Struct, frozen=True):
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
    return discover_folders(root, config, under)[0]


def discover_folders(root: Path, config: WorldConfig, under: str = "") -> tuple[list[ChunkInfo], list[Diagnostic]]:
    """Every chunk under ``root`` (or ``under``), sorted by name, and a warning per folder link not followed."""
    root = Path(root)
    walk = _Walk(root, tuple(Path(os.path.realpath(p)) for p in config.allowed_paths(root)))
    walk.run(under.strip("/"))
    chunks = [_chunk(root, rel, names, config) for rel, names in walk.found]
    return sorted(chunks, key=lambda c: c.name), sorted(walk.warnings, key=lambda d: d.location.file)


def discover_listed(root: Path, config: WorldConfig,
                    listing: Mapping[str, Sequence[str]]) -> tuple[list[ChunkInfo], list[Diagnostic]] | None:
    """:func:`discover_folders` of the whole world from ``listing``, every folder of the world by its path
    relative to ``root`` with the names of its direct entries that are not folders, as a stat walk
    that refuses links just took it (:meth:`pipeline.cook.noop.Walk.listing`): the world is not walked
    again.  None when the listing cannot tell: a folder named like a glTF file, which the walk of
    :func:`discover_folders` lists as a file of its chunk."""
    chunks = []
    for rel, names in listing.items():
        parts = rel.split(os.sep) if rel else []
        if any(part.startswith(".") for part in parts):
            continue  # hidden, or in a hidden folder
        if parts and is_gltf_name(parts[-1]):
            return None
        files = sorted(n for n in names if not n.startswith(".") and is_gltf_name(n))
        if files:
            chunks.append(_chunk(root, "/".join(parts), files, config))
    return sorted(chunks, key=lambda c: c.name), []


def _chunk(root: Path, rel: str, names: list[str], config: WorldConfig) -> ChunkInfo:
    name = chunk_name(rel)
    prefix = f"{rel}/" if rel else ""
    files = tuple(prefix + n for n in names)  # sorted by name already: one prefix, the same order
    return ChunkInfo(name, config.level_of(name), root / rel if rel else root, files)


class _Walk:
    """The folders holding glTF files, real folders first, then the folder links worth following."""

    def __init__(self, root: Path, allowed: tuple[Path, ...]):
        self.root, self.allowed = root, allowed
        self.found: list[tuple[str, list[str]]] = []
        self.warnings: list[Diagnostic] = []
        self.seen: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (relative path of the link, its real target)

    def run(self, rel: str) -> None:
        self.folder(rel, os.path.realpath(self.root / rel if rel else self.root))
        while self.links:  # links found while walking links are followed after them, in name order
            links, self.links = sorted(self.links), []
            for link, target in links:
                if target in self.seen:
                    self.warn(link, f"folder link leads to {self.shown(target)}, which the world already "
                                    "holds; not followed")
                elif not any(target == str(r) or Path(target).is_relative_to(r) for r in self.allowed):
                    self.warn(link, f"folder link leads outside the world to {target}; not followed "
                                    "(name its folder in allowed_roots in pipeline.toml to follow it)")
                else:
                    self.folder(link, target)

    def folder(self, rel: str, real: str) -> None:
        self.seen.add(real)
        at = os.path.join(self.root, rel) if rel else str(self.root)
        try:
            with os.scandir(at) as found:  # names sorted, entries by name: one sort of strings, no key function
                entries = {entry.name: entry for entry in found if not entry.name.startswith(".")}
        except OSError:
            return
        files, folders = [], []
        for name in sorted(entries):
            if is_gltf_name(name):
                files.append(name)  # even a folder, FIFO or broken link: reading it reports why it is bad
                continue
            entry, path = entries[name], f"{rel}/{name}" if rel else name
            if entry.is_dir(follow_symlinks=False):
                folders.append(path)
            elif entry.is_symlink() and entry.is_dir():
                self.links.append((path, os.path.realpath(entry.path)))
        if files:
            self.found.append((rel, files))
        for path in folders:
            real = os.path.realpath(os.path.join(self.root, path))
            if real not in self.seen:  # a bind mount or the like can show one folder twice
                self.folder(path, real)

    def shown(self, target: str) -> str:
        try:
            inside = Path(target).relative_to(os.path.realpath(self.root)).as_posix()
            return "the world's root folder" if inside == "." else inside
        except ValueError:
            return target

    def warn(self, link: str, message: str) -> None:
        self.warnings.append(Diagnostic(Location(link), message, severity="warning"))
