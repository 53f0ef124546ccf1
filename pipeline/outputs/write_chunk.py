"""One chunk's index on disk, written atomically, compared, and kept current.

:func:`update_chunk` rebuilds nothing for a chunk whose named inputs (:mod:`pipeline.outputs.chunk_inputs`)
and index file (stamp) are those this tool last wrote or checked.  Otherwise its
index is built from the job records (no blob read) and written unless the file on disk
already holds exactly those bytes.  Under ``verify`` (``cook --verify``) no stamp is
trusted: the index is rebuilt and compared.  The blobs it names are the shader library's
business (:mod:`pipeline.outputs.write_library`), grown before any index is written.
It returns a :class:`ChunkWrite`, which says what it wrote and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec
import orjson

from pipeline.cache.store import Store
from pipeline.outputs import atomic
from pipeline.outputs import chunk_index
from pipeline.outputs import manifest as mf
from pipeline.outputs.chunk_build import CookedJobs, build_chunk
from pipeline.outputs.records import OUTPUTS, as_tuple, outputs_current, outputs_entry
from pipeline.outputs.reflection import prefetch, reflect_cached


VERIFY_REASON = "differs from what its inputs give (cook --verify)"


class ChunkWrite(msgspec.Struct):
    """What bringing one chunk's index up to date did."""

    json_path: Path
    blobs: frozenset[str] | None = None             # the blobs the index names; None: recorded as current
    reason: str | None = None                       # why its outputs were rebuilt; None: recorded as current
    written: list[str] = msgspec.field(default_factory=list)  # the files rewritten
    keys_before: dict[str, str] | None = None        # key text -> hash of the index replaced (None: none)
    keys: Mapping[str, mf.ManifestEntry] | None = None  # the new index's entries, when it was written
    warnings: tuple[str, ...] = ()
    manifest: mf.ChunkManifest | None = None          # the manifest built (None: recorded as current)
    record: tuple | None = None                       # (inputs, the outputs record found) to record once in place
    counts: Mapping[str, int] | None = None           # key text -> its draws, where the entries hold none (a pool's)

    @property
    def outputs(self) -> list[str]:
        return [str(self.json_path)]


def update_chunk(jobs: CookedJobs, chunk: str, level: str, required: Mapping, file_errors: list[dict],
                 inputs: list | None, store: Store, out: Path, has_blob: Callable[[str], bool], *,
                 verify: bool = False, write: Callable[[Path, bytes], None] | None = None) -> ChunkWrite:
    """Bring one chunk's index up to date against its outputs record; ``inputs``: its named
    input digests; ``has_blob``: whether the library holds a blob (a stage whose blob it lacks is
    left out of the index, as an error); ``verify``: trust no recorded stamp; ``write(path, data)``:
    how the index is written (default: at once, atomically; a cook stages it, :class:`pipeline.outputs.atomic.Staged`)."""
    json_path = mf.chunk_manifest_path(out, chunk)
    record = as_tuple(store.get(OUTPUTS, str(json_path.resolve())))
    reason = outputs_current(record, inputs, json_path)
    if reason is None and not verify:
        return ChunkWrite(json_path)
    done = write_built(jobs, chunk, level, required, file_errors, store, out, has_blob, write or write_now)
    done.reason = reason or (VERIFY_REASON if done.written else None)
    done.record = (inputs, record)
    if write is None:  # written in place: its stamp is final now (a staged index's is once it is published)
        record_outputs(store, done)
    return done


def record_outputs(store: Store, done: ChunkWrite) -> None:
    """Remember the stamp of the index ``done`` wrote or checked, with its inputs (the outputs record)."""
    if done.record is None:
        return
    inputs, old = done.record
    new = outputs_entry(inputs, done.json_path)
    if as_tuple(new) != old:
        store.set(OUTPUTS, str(done.json_path.resolve()), new)


def write_built(jobs: CookedJobs, chunk: str, level: str, required: Mapping, file_errors: list[dict], store: Store,
                out: Path, has_blob: Callable[[str], bool], write: Callable[[Path, bytes], None]) -> ChunkWrite:
    """Build one chunk's index; write it unless the file already holds exactly those bytes."""
    def reflection(digest: str) -> dict:
        return reflect_cached(store, digest, store.get_blob)

    built = build_chunk(jobs, chunk, level, required, file_errors, has_blob, reflection)
    manifest = built.manifest
    json_path = mf.chunk_manifest_path(out, chunk)
    data = mf.dump_json(manifest.to_json())
    on_disk = atomic.read_if_exists(json_path)
    if on_disk == data:
        return ChunkWrite(json_path, mf.stage_hashes(manifest), warnings=built.warnings, manifest=manifest)
    before = manifest_keys(on_disk)
    write(json_path, data)
    return ChunkWrite(json_path, mf.stage_hashes(manifest), written=[str(json_path)], keys_before=before,
                      keys=manifest.keys, warnings=built.warnings, manifest=manifest)


def write_now(path: Path, data: bytes) -> None:
    """Write one chunk index at once, atomically, under its folder's lock."""
    with atomic.locked(path.parent):
        atomic.write_atomic(path, data)


def prefetch_reflections(jobs: CookedJobs, store: Store, workers: int) -> None:
    """The runtime contract and the library reflect every Vulkan blob of the cook: the stored reflections
    are read together, those not stored yet (the blobs new to this cook, mostly) made in parallel."""
    run = jobs.run
    digests = [r.blob for key, r in run.results.items()
               if r.blob and jobs.plan.jobs[key].request.target.startswith("vulkan")]
    if digests:
        prefetch(store, digests, store.get_blob, workers)


def manifest_keys(data: bytes | None) -> dict[str, str] | None:
    """Key text -> key hash of a chunk index's bytes (None when missing or not an index of this format)."""
    if data is None:
        return None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or doc.get("format") != mf.FORMAT_VERSION:
        return None
    return chunk_index.key_hashes(doc)
