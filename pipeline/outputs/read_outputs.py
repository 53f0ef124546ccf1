"""Reading a chunk's outputs while a cook may replace them: the manifest with the pak it names.

A cook writes a chunk's new pak, then renames the manifest naming it over the old one,
then removes the old pak (:func:`pipeline.outputs.write_chunk.write_chunk_outputs`).  A reader
that read the old manifest just before the rename finds its pak gone: a newer manifest
is in place, so it reads the manifest again (docs/formats.md, "A manifest and its pak
agree at every instant").  :func:`load_chunk` does that, a bounded number of times.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakError, PakReader

ATTEMPTS = 20  # each retry means a cook replaced the chunk's outputs meanwhile


def load_chunk(out: Path | str, chunk: str) -> tuple[mf.ChunkManifest, PakReader]:
    """The chunk's manifest and its pak, opened as one consistent pair.

    Raises :class:`~pipeline.outputs.manifest.ManifestError` for a bad manifest and
    :class:`~pipeline.outputs.pak.PakError` for a pak that is bad, or missing while the
    manifest naming it stays in place.
    """
    path = mf.chunk_manifest_path(out, chunk)
    for _ in range(ATTEMPTS - 1):
        manifest = mf.load_chunk_manifest(path)
        try:
            return manifest, PakReader(mf.chunk_pak_path(out, manifest))
        except PakError:
            if mf.load_chunk_manifest(path).pak == manifest.pak:
                raise  # the manifest on disk still names it: the pak itself is at fault
    manifest = mf.load_chunk_manifest(path)
    return manifest, PakReader(mf.chunk_pak_path(out, manifest))
