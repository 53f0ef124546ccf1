"""The reflection of the blobs a cook's outputs name, each made once: read from the store, else reflected.

:mod:`pipeline.compilers.reflect` runs SPIRV-Cross on a blob; here its results are kept in the
store (:mod:`pipeline.compilers.reflection_records`) by blob digest and tool revision, so a blob
is reflected once (by a build-farm worker that compiled it, or here), and a cook's new blobs are
reflected in parallel before its outputs are written (:func:`prefetch`).  :func:`vertex_layout`
turns a vertex blob's reflection into the pipeline state's vertex input layout.
"""

from __future__ import annotations

import concurrent.futures

from pipeline.compilers.reflect import ReflectionError, reflect, tool_version
from pipeline.compilers.reflection_records import REFLECTION


def prefetch(store, digests, load_blob, workers: int) -> int:
    """Reflect the blobs among ``digests`` that have no stored reflection yet, ``workers`` at a
    time (threads: SPIRV-Cross's library lets go of the GIL, and its command is a process), and store
    them; the number reflected.

    The outputs then find every reflection stored.  A blob that cannot be reflected is
    left to :func:`reflect_cached`, which reports it where the outputs need it.
    """
    try:
        version = tool_version()
    except ReflectionError:
        return 0
    digest_of, missing = {f"{d}:{version}": d for d in sorted(set(digests))}, []
    for key, doc in store.get_each(REFLECTION, digest_of):  # a few hundred documents in memory at a time
        if isinstance(doc, dict):
            _seen(key, doc)  # kept for reflect_cached, which the outputs call next
        else:
            missing.append(digest_of[key])
    blobs = {d: load_blob(d) for d in missing}
    todo = [d for d in missing if blobs[d]]
    if not todo:
        return 0

    def one(digest: str) -> dict | None:
        try:
            return reflect(blobs[digest])
        except ReflectionError:
            return None

    with concurrent.futures.ThreadPoolExecutor(max(1, min(workers, len(todo)))) as pool:
        docs = list(pool.map(one, todo))
    for digest, doc in zip(todo, docs):
        if doc is not None:
            store.set(REFLECTION, f"{digest}:{version}", doc)
    return sum(doc is not None for doc in docs)


_SEEN: dict[str, dict] = {}  # reflections this process read or made: a blob's never changes (content-addressed)
_SEEN_MAX = 8192


def reflect_cached(store, digest: str, load_blob) -> dict:
    """Reflection of the blob ``digest`` from the store, else reflected now (``load_blob(digest)``) and stored.

    Each reflection is read from the store once per process: every chunk index of a cook
    names most of the same blobs.  Callers must not change the document returned."""
    key = f"{digest}:{tool_version()}"
    doc = _SEEN.get(key)
    if doc is not None:
        return doc
    cached = store.get(REFLECTION, key)
    if isinstance(cached, dict):
        doc = cached
    else:
        blob = load_blob(digest)
        if blob is None:
            raise ReflectionError.at(digest, "blob missing from the cache; cannot reflect it")
        doc = reflect(blob)
        store.set(REFLECTION, key, doc)
    _seen(key, doc)
    return doc


def _seen(key: str, doc: dict) -> None:
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[key] = doc


def vertex_layout(reflection: dict, instance_inputs: tuple[int, ...] = ()) -> list[dict]:
    """One binding per vertex input (non-interleaved buffers, as glTF accessors usually are)."""
    layout = []
    for binding, v in enumerate(reflection["inputs"]):
        if "format" not in v:
            raise ReflectionError.at(v["name"], f"vertex input type {v['type']} has no vertex format")
        rate = "instance" if v["location"] in instance_inputs else "vertex"
        layout.append({"location": v["location"], "binding": binding, "format": v["format"], "stride": v["size"],
                       "rate": rate})
    return layout
