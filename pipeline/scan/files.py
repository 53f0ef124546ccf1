"""Scanning one glTF file (pure: bytes in, draws and diagnostics out), and the freshness of the buffers it read."""

from __future__ import annotations

import os
import typing
from pathlib import Path

import msgspec

from pipeline.config import WorldConfig
from pipeline.errors import Diagnostic, GltfError
from pipeline.facts import Draw, DrawSource
from pipeline.fileio import check_inside
from pipeline.scan.buffers import OPTIONAL_FACTS, BufferData, primitive_facts
from pipeline.scan.gltf import parse_gltf, read_bytes
from pipeline.scan.gltf.draws import FileDraw, SharedFacts, chunk_lights, draws_of
from pipeline.scan.gltf.grid import grid_chunk_of
from pipeline.stamps import of_stat, stamp_of, why_dirty

if typing.TYPE_CHECKING:
    pass


# ---------------------------------------------------------------- one file (pure)
_ASK = object()  # scan_bytes: the grid is config.grid(level)


class FileScan(msgspec.Struct):
    """One file's draws (source indices + facts), diagnostics and buffer dependencies."""

    draws: list[FileDraw]
    diagnostics: list[Diagnostic]
    deps: list[Path] = msgspec.field(default_factory=list)
    lights: tuple[tuple[str, int, int, int], ...] = ()  # (chunk, directional, point, spot): see chunk_lights
    failed: bool = False  # the file could not be read as glTF (its error is in diagnostics)


def scan_bytes(data: bytes, path: Path, *, root: Path, file: str, chunk_name: str, level: str,
               config: WorldConfig, optional_facts: frozenset[str], shared: SharedFacts | None = None,
               grid: float | None | object = _ASK) -> FileScan:
    """Draws of one file's content; a bad file gives no draws and one located error.

    ``shared`` (one per scan) shares equal fact objects between files and gives each
    draw its signature; ``grid`` is ``config.grid(level)`` when the caller knows it.
    """
    try:
        gltf = parse_gltf(data, path, file, config.limits)
        buffers = BufferData(gltf, root, config.limits)
        wanted = optional_facts & OPTIONAL_FACTS
        optional = (lambda m, p: primitive_facts(buffers, m, p, wanted)) if wanted else None
        grid = config.grid(level) if grid is _ASK else grid
        chunk_of = grid_chunk_of(gltf, level, grid) if grid else (lambda inst: (chunk_name, level))
        return FileScan(draws_of(gltf, chunk_of, optional, shared, config.scenes), buffers.warnings, buffers.dependencies,
                        chunk_lights(gltf.doc, chunk_of, config.scenes))
    except GltfError as exc:
        return FileScan([], exc.diagnostics, failed=True)


def scan_file(path: Path, *, root: Path, chunk_name: str, level: str, config: WorldConfig,
              optional_facts: frozenset[str] = frozenset()) -> tuple[list[Draw], list[Diagnostic]]:
    """Draws and diagnostics of one file, without any cache."""
    file = relative_name(Path(path), Path(root))
    try:
        check_inside(path, config.allowed_paths(Path(root)), file, error=GltfError, what="glTF file")
        data = read_bytes(Path(path), file, config.limits)
    except GltfError as exc:
        return [], exc.diagnostics
    result = scan_bytes(data, Path(path), root=Path(root), file=file, chunk_name=chunk_name, level=level,
                        config=config, optional_facts=optional_facts)
    return [to_draw(file, d) for d in result.draws], result.diagnostics


def to_draw(file: str, d: FileDraw) -> Draw:
    chunk = d.facts.chunk
    source = DrawSource(file=file, chunk=chunk.name, level=chunk.level, node=d.node, mesh=d.mesh,
                        primitive=d.primitive, material=d.material, variant=d.variant)
    return Draw(source=source, facts=d.facts)


def relative_name(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()




def stat_dep(path: Path) -> tuple:
    return (str(path), *of_stat(os.stat(path)))


def deps_fresh(deps) -> bool:
    """True when every recorded (path, mtime_ns, size, inode, ctime_ns) still matches the file on disk
    (:func:`pipeline.stamps.why_dirty`)."""
    return all(why_dirty(recorded, stamp_of(path)) is None for path, *recorded in deps)


