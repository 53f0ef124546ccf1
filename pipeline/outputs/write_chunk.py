"""One chunk's outputs on disk: its .pak and manifest, written atomically, compared, and kept current.

:func:`update_chunk` rebuilds nothing for a chunk whose named inputs (:mod:`pipeline.outputs.chunk_inputs`)
and output files (stat) are those this tool last wrote or checked.  Otherwise its
manifest is built from the job records (no blob read), and when the files on disk
already are those outputs (manifest bytes equal, .pak index equal and the .pak
untouched since) the chunk is done; else its blobs are read from the store and the
files written as needed (:func:`write_chunk_outputs`).  Under ``verify`` (``cook --verify``)
no stamp is trusted: the manifest is rebuilt and compared and the pak read and checked
against its own checksum (:func:`pipeline.outputs.records.pak_current`).  It returns a
:class:`ChunkWrite`, which says what it wrote and why.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.cache.store import Store
from pipeline.outputs import atomic
from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_build import BuiltChunk, CookedJobs, build_chunk
from pipeline.outputs.pak import read_index, write_pak
from pipeline.outputs.records import OUTPUTS, as_tuple, outputs_current, outputs_entry, pak_current
from pipeline.outputs.reflection import prefetch, reflect_cached


VERIFY_REASON = "differs from what its inputs give (cook --verify)"


@dataclass
class ChunkWrite:
    """What bringing one chunk's outputs up to date did."""

    json_path: Path
    pak: str                                        # the pak file name its manifest gives
    reason: str | None = None                       # why its outputs were rebuilt; None: recorded as current
    written: list[str] = field(default_factory=list)  # the files rewritten
    keys_before: dict[str, str] | None = None        # key text -> hash of the manifest replaced (None: none)
    keys: Mapping[str, mf.ManifestEntry] | None = None  # the new manifest's entries, when files were written
    warnings: tuple[str, ...] = ()

    @property
    def outputs(self) -> list[str]:
        return [str(self.json_path), str(self.json_path.with_name(self.pak))]


def update_chunk(jobs: CookedJobs, chunk: str, level: str, required: Mapping, file_errors: list[dict],
                 inputs: list | None, store: Store, out: Path, blobs: dict[str, bytes | None], *,
                 verify: bool = False) -> ChunkWrite:
    """Bring one chunk's .json and .pak up to date against its outputs record; ``inputs``: its named
    input digests; ``blobs``: blobs read so far this cook (shared by the chunks, filled here);
    ``verify``: trust no recorded stamp."""
    json_path = mf.chunk_manifest_path(out, chunk)
    record = as_tuple(store.get(OUTPUTS, str(json_path.resolve())))
    reason = outputs_current(record, inputs, json_path)
    if reason is None and not verify:
        return ChunkWrite(json_path, record[2])
    done = _write(jobs, chunk, level, required, file_errors, store, out, blobs, record, verify)
    done.reason = reason or (VERIFY_REASON if done.written else None)
    new = outputs_entry(inputs, json_path, done.pak)
    if as_tuple(new) != record:
        store.set(OUTPUTS, str(json_path.resolve()), new)
    return done


def _write(jobs: CookedJobs, chunk: str, level: str, required: Mapping, file_errors: list[dict], store: Store,
           out: Path, blobs: dict, record, verify: bool) -> ChunkWrite:
    """Build one chunk's manifest; write its files unless they are already exactly those outputs."""
    def reflection(digest: str) -> dict:
        return reflect_cached(store, digest, lambda d: blobs[d] if blobs.get(d) else store.get_blob(d))

    built = build_chunk(jobs, chunk, level, required, file_errors, lambda digest: True, reflection)
    manifest = built.manifest
    json_path = mf.chunk_manifest_path(out, chunk)
    if pak_current(record, manifest.pak, mf.chunk_pak_path(out, manifest), verify=verify) \
            and chunk_outputs_current(out, manifest):
        # the .pak is untouched since last written or checked, and indexes exactly these blobs
        return ChunkWrite(json_path, manifest.pak, warnings=built.warnings)
    for digest in mf.stage_hashes(manifest) - set(blobs):
        blobs[digest] = store.get_blob(digest)
    if any(blobs[digest] is None for digest in mf.stage_hashes(manifest)):  # gone since the run
        rebuilt = build_chunk(jobs, chunk, level, required, file_errors, lambda digest: blobs.get(digest) is not None,
                              reflection)
        built = BuiltChunk(rebuilt.manifest, tuple(dict.fromkeys([*built.warnings, *rebuilt.warnings])))
        manifest = built.manifest
    needed = {digest: blobs[digest] for digest in mf.stage_hashes(manifest)}
    before = manifest_keys(json_path)
    written = [str(p) for p in write_chunk_outputs(out, manifest, needed)]
    return ChunkWrite(json_path, manifest.pak, written=written, keys_before=before,
                      keys=manifest.keys if written else None, warnings=built.warnings)


def prefetch_reflections(jobs: CookedJobs, store: Store, workers: int, blobs: dict[str, bytes | None]) -> None:
    """The runtime contract reflects every Vulkan blob; those new to this cook are reflected in parallel
    first.  The blobs read for it stay in ``blobs``, where the chunks' .pak writing finds them."""
    def load(digest: str) -> bytes | None:
        if digest not in blobs:
            blobs[digest] = store.get_blob(digest)
        return blobs[digest]

    run = jobs.run
    digests = [r.blob for key in [*run.compiled, *run.fetched]
               if (r := run.results.get(key)) is not None and r.blob
               and jobs.plan.jobs[key].request.target.startswith("vulkan")]
    if digests:
        prefetch(store, digests, load, workers)


def manifest_keys(path: Path) -> dict[str, str] | None:
    """Key text -> key hash of the chunk manifest on disk (None when missing, unreadable or of
    another format)."""
    if not path.is_file():
        return None
    try:
        return {text: entry.hash for text, entry in mf.load_chunk_manifest(path).keys.items()}
    except mf.ManifestError:
        return None


# ------------------------------------------------------------------ the files
def write_chunk_outputs(out: Path | str, manifest: mf.ChunkManifest,
                        blobs: Mapping[str, bytes]) -> list[Path]:
    """Write the chunk's pak, then the manifest naming it, then remove the chunk's other paks.

    All under a lock on the folder, so a concurrent cook of the same chunk never
    removes the pak the manifest on disk names.  ``blobs`` maps SHA-256 hex ->
    SPIR-V and must hold every stage blob the manifest names (extra blobs are
    ignored).  Returns the files actually rewritten.
    """
    needed = mf.stage_hashes(manifest)
    missing = sorted(needed - set(blobs))
    if missing:
        raise ValueError(f"{manifest.chunk}: no blob for {len(missing)} stage hash(es), e.g. {missing[0][:12]}")
    json_path = mf.chunk_manifest_path(out, manifest.chunk)
    writes = [(mf.chunk_pak_path(out, manifest), write_pak({h: blobs[h] for h in needed})),
              (json_path, mf.dump_json(manifest.to_json()))]
    with atomic.locked(json_path.parent):
        written = [path for path, data in writes if atomic.write_if_changed(path, data)]
        remove_other_paks(json_path.parent, json_path.stem, manifest.pak)
    return written


def remove_other_paks(folder: Path, stem: str, keep: str | None) -> list[Path]:
    """Remove the paks of chunk file name ``stem`` in ``folder`` except ``keep``; call under the folder lock."""
    removed = []
    try:
        names = [e.name for e in os.scandir(folder) if e.name.endswith(".pak")]
    except OSError:
        return removed
    for name in names:
        if name != keep and mf.pak_stem(name) == stem:
            try:
                os.unlink(folder / name)
                removed.append(folder / name)
            except FileNotFoundError:
                pass
    return removed


def chunk_outputs_current(out: Path | str, manifest: mf.ChunkManifest) -> bool:
    """True when ``<out>/<chunk>.json`` holds exactly this manifest's bytes and ``<out>/<chunk>.pak``
    indexes exactly its stage blobs (the pak's header and index are read, never its blobs)."""
    on_disk = atomic.read_if_exists(mf.chunk_manifest_path(out, manifest.chunk))
    if on_disk is None:
        return False
    if on_disk != mf.dump_json(manifest.to_json()):
        return False
    return read_index(mf.chunk_pak_path(out, manifest)) == mf.stage_hashes(manifest)
