"""A shader library as a cook leaves it: ``shaders.pak`` and its chunk table ``shaders.chunks`` beside it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pipeline.outputs.atomic import write_atomic
from pipeline.outputs.chunk_table import ChunkTable, dump_table, table_path
from pipeline.outputs.pak import recorded_checksum
from pipeline.outputs.pak_write import write_pak


def write_library(path: Path, blobs: Mapping[str, bytes], reflection: Mapping | None = None,
                  chunks: Mapping[str, Iterable[str]] | None = None) -> bytes:
    """Write the library of ``blobs`` at ``path`` and, when ``chunks`` is given, its table beside it;
    returns the library's bytes."""
    data = bytes(write_pak(blobs, reflection))
    write_atomic(path, data)
    if chunks is not None:
        table = ChunkTable(sets={c: frozenset(b) for c, b in chunks.items()})
        write_atomic(table_path(path), dump_table(table, sorted(blobs), recorded_checksum(data)))
    return data
