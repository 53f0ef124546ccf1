"""Output files for people: a chunk index, level manifest or shader library, every reference resolved.

The shipped files are compact (:mod:`pipeline.outputs.chunk_index`: tables and positions;
:mod:`pipeline.outputs.pak`: binary).  :func:`view` gives the same content as one plain
JSON document (``pipeline show FILE``): a chunk's keys by text with their features and
stage hashes, its draws with key and pipeline state id per pass, its pipeline states by
id; a level's keys and PSO list with the chunks using each; a library's blobs with their
size, stage and the chunks using them.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_table import TABLE_SUFFIX, load_table
from pipeline.outputs.pak import PakReader, file_version


def view(path: Path | str) -> dict:
    """The plain document of one output file; a located error when it is not one of this format."""
    path = Path(path)
    if not path.is_file():
        raise PipelineError.at(str(path), "cannot read: not a file")
    if file_version(path) is not None:
        return _library(PakReader(path), path)
    if path.suffix == TABLE_SUFFIX:  # the library's chunk table: read with the library it names
        library = PakReader(path.with_suffix(Path(mf.LIBRARY_NAME).suffix))
        table = load_table(path, library.hashes(), library.checksum)
        if table is None:
            raise PipelineError.at(str(path), f"not the chunk table of {library.name} (written for another "
                                   "library, or malformed): cook again")
        return {"table": path.name, "library": Path(library.name).name,
                "chunks": {c: sorted(b) for c, b in sorted(table.items())}}
    if path.name.endswith(mf.LEVEL_SUFFIX + ".json"):
        m = mf.load_level_manifest(path)
        return {"format": mf.FORMAT_VERSION, "level": m.level, "library": m.library,
                "chunks": {c: {"index": m.index_path(c), "keys": dict(sorted(m.uses[c][0].items())),
                               "pipelines": list(m.uses[c][1])} for c in m.chunks},
                "keys": {k: e.to_json(with_chunks=True) for k, e in m.keys.items()},
                "pipelines": dict(m.pipelines), "errors": list(m.errors)}
    if path.suffix == ".json":
        return {"format": mf.FORMAT_VERSION, **expanded(mf.load_chunk_manifest(path))}
    raise PipelineError.at(str(path), "not an output of pipeline cook (a chunk index, a level manifest, "
                           "shaders.pak or its chunk table shaders.chunks)")


def expanded(m) -> dict:
    """A chunk manifest for people (``pipeline show``): every reference replaced by what it names."""
    return {"chunk": m.chunk, "level": m.level, "library": m.library,
            "keys": {k: e.to_json() for k, e in m.keys.items()}, "errors": list(m.errors), "draws": list(m.draws),
            "pipelines": dict(m.pipelines), "fallbacks": dict(m.fallbacks)}


def _library(reader: PakReader, path: Path) -> dict:
    users: dict[str, list[str]] = {}
    for chunk, blobs in sorted(reader.chunks.items()):
        for digest in blobs:
            users.setdefault(digest, []).append(chunk)
    blobs = {}
    for digest in reader.hashes():
        reflection = reader.reflection(digest)
        blobs[digest] = {"bytes": len(reader.get(digest)), "stage": (reflection or {}).get("stage"),
                         "entry": (reflection or {}).get("entry"), "chunks": users.get(digest, [])}
    return {"library": path.name, "version": reader.version, "bytes": path.stat().st_size,
            "blob_bytes": sum(b["bytes"] for b in blobs.values()), "blobs": blobs,
            "chunks": {c: sorted(b) for c, b in sorted(reader.chunks.items())}}
