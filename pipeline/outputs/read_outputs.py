"""Reading a chunk's outputs while a cook may replace them: the library, then the chunk index.

A cook grows the shader library before it renames a chunk index into place and drops
blobs only after (:mod:`pipeline.outputs.write_library`), each file replaced by one
rename.  A reader therefore opens the library first (its bytes are then fixed for the
reader) and reads the chunk index after: every blob the index names is in that library,
unless a cook replaced both in between, in which case the reader opens them again
(docs/formats.md, "The library and its indexes agree at every instant").  :func:`load_chunk`
does that, a bounded number of times, and fills the index's ``reflection`` from the library.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakCorruptError, PakReader
from pipeline.structs import replace

ATTEMPTS = 20  # each retry means a cook replaced the outputs meanwhile


def load_chunk(out: Path | str, chunk: str, library: PakReader | None = None) -> tuple[mf.ChunkManifest, PakReader]:
    """The chunk's index (with the reflection of its blobs) and the library holding its blobs; ``library``:
    one opened before (a loader keeps it open across chunks), used when it holds the index's blobs.

    Raises :class:`~pipeline.outputs.manifest.ManifestError` for a bad index and
    :class:`~pipeline.outputs.pak.PakError` for a library that is bad, missing, or lacks a
    blob of the index while both stay in place.
    """
    path = mf.chunk_manifest_path(out, chunk)
    for attempt in range(ATTEMPTS):
        library = library if library is not None and attempt == 0 else PakReader(mf.library_path(out))
        manifest = mf.load_chunk_manifest(path)
        blobs = sorted(mf.stage_hashes(manifest))
        missing = [d for d in blobs if d not in library]
        if not missing:
            reflection = {d: doc for d in blobs if (doc := library.reflection(d)) is not None}
            return replace(manifest, reflection=reflection), library
    raise PakCorruptError.at(str(mf.library_path(out)), f"the shader library lacks blob {missing[0][:12]} "
                             f"named by {path} ({len(missing)} missing); cook again")
