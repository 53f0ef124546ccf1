"""A level manifest's compact document: the union of its chunk indexes (output format 5).

The union's keys and pipeline states are written as a chunk index writes them
(:mod:`pipeline.outputs.chunk_index`: draws summed, no render states or specialization
values per key, those being in the pipeline states), and per chunk its index path, the
keys it uses with their draws as one flat list of ``key, draws`` pairs (by position,
ascending) and the pipeline states it uses, by position.  A flat list of integers is what
a JSON parser reads fastest: a cook of one chunk reads the level's other rows without
making a list per key.  docs/formats.md describes every field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from pipeline.outputs.chunk_index import _pick, decode, encode
from pipeline.structs import replace

_CHUNK_ONLY = ("chunk", "level", "library", "draws", "files", "passes", "uses", "fallbacks")


_RAW = msgspec.json.Decoder(dict[str, msgspec.Raw])  # an object's members, each left as its JSON text


def raw_rows(data: bytes) -> dict:
    """A level manifest's document with its per-chunk rows left unparsed: ``chunks`` maps each chunk to
    its row's JSON text (``msgspec.Raw``), every other member parsed.  A cook of one chunk of a level
    of 1,000 reads the other rows' 700,000 integers only when it must (positions moved): found, not made.
    Raises ValueError on what is not JSON, or a ``chunks`` that is not an object."""
    members = _RAW.decode(data)
    doc = {name: orjson.loads(memoryview(raw)) for name, raw in members.items() if name != "chunks"}
    if "chunks" in members:
        doc["chunks"] = _RAW.decode(members["chunks"])
    return doc


class _Union:
    """A level's union in the shape :func:`encode` reads: its keys and PSO list, no draws."""

    def __init__(self, m) -> None:
        self.keys, self.pipelines, self.errors = m.keys, m.pipelines, m.errors
        self.draws, self.fallbacks = (), {}
        self.chunk = self.level = ""


def encode_level(m) -> dict:
    """The compact document of level manifest ``m``: the union's keys and pipeline states as a chunk
    index writes them (draws summed; no render states or specialization values per key, those
    being in the pipeline states), and per chunk its index path, the keys it uses with their draws
    (``[key, draws, key, draws, ...]``, by position) and the pipeline states it uses, by position."""
    doc = encode(_Union(m), "", remember=False)  # its union was read before it is written
    for name in _CHUNK_ONLY:
        doc.pop(name, None)
    key_at = {text: i for i, text in enumerate(sorted(m.keys))}
    pipeline_at = {pid: i for i, pid in enumerate(sorted(m.pipelines))}
    chunks = {}
    for chunk in sorted(set(m.chunks)):
        keys, pipelines = m.uses.get(chunk, ({}, ()))
        chunks[chunk] = {"index": m.index_path(chunk),
                         "keys": [n for text, draws in sorted(keys.items()) if text in key_at
                                  for n in (key_at[text], draws)],
                         "pipelines": sorted(pipeline_at[p] for p in pipelines if p in pipeline_at)}
    return {"level": m.level, "library": m.library, "chunks": chunks, **doc}


def users(m) -> tuple[list[int], list[int]]:
    """Per position of the ``keys`` and of the ``pipelines`` :func:`encode_level` writes for ``m``, how many
    chunk rows name it (what a cook records beside the file, so that the next one-chunk cook of the
    level need not read the other rows: :func:`pipeline.outputs.level_delta.level_update`)."""
    key_at = {text: i for i, text in enumerate(sorted(m.keys))}
    pipeline_at = {pid: i for i, pid in enumerate(sorted(m.pipelines))}
    keys, states = [0] * len(key_at), [0] * len(pipeline_at)
    for chunk in set(m.chunks):
        used, pipelines = m.uses.get(chunk, ({}, ()))
        for text in used:
            if text in key_at:
                keys[key_at[text]] += 1
        for pid in pipelines:
            if pid in pipeline_at:
                states[pipeline_at[pid]] += 1
    return keys, states


def decode_level(doc: dict, where, entry: Callable[..., Any]) -> dict:
    """The fields of a :class:`~pipeline.outputs.manifest.LevelManifest` (but ``level``) from its document."""
    fields = decode_union(doc, where, entry)
    texts, ids = list(fields["keys"]), list(fields["pipelines"])
    users: dict[str, list[str]] = {text: [] for text in texts}
    uses = {}
    for chunk, item in where.get(doc, "chunks", dict).items():
        at = where.at("chunks", chunk)
        if not isinstance(item, dict):
            raise at.error("expected an object")
        keys = {}
        row = at.get(item, "keys", list)
        if len(row) % 2 or not all(isinstance(n, int) and not isinstance(n, bool) for n in row[1::2]):
            raise at.at("keys").error("expected [key, draws, key, draws, ...]")
        for position, draws in zip(row[0::2], row[1::2]):
            text = _pick(texts, position, at, "keys")
            keys[text] = draws
            users[text].append(chunk)
        uses[chunk] = (keys, tuple(_pick(ids, i, at, "pipelines") for i in at.get(item, "pipelines", list)))
    keys = {text: _with_chunks(e, users[text]) for text, e in fields["keys"].items()}
    return {"chunks": tuple(uses), "keys": keys, "errors": fields["errors"], "pipelines": fields["pipelines"],
            "uses": uses}


def decode_union(doc: dict, where, entry: Callable[..., Any]) -> dict:
    """The union's ``keys`` (draws summed, no chunks named), ``pipelines`` and ``errors`` of a level
    manifest's document, its per-chunk rows left unread."""
    return decode({**doc, **{name: [] for name in ("draws", "files", "passes", "uses")}, "fallbacks": {}},
                  where, entry)


def _with_chunks(e, chunks: list[str]):
    return replace(e, chunks=tuple(sorted(chunks)))
