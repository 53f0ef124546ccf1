"""Scan records: the facts of a chunk's files, reused while the files do not change.

``scan:<chunk key>`` (version 4), one per chunk and scan configuration (the chunk key
hashes the world root, chunk, level, grid, reader limits, optional facts, the facts
schema and :data:`pipeline.scan.scanner.FORMAT_VERSION`)::

    {"files": {"<file>": {"stat": [mtime_ns, size, inode, ctime_ns], "size": int, "sha256": "<content hash>",
                          "deps": [["<external buffer path>", mtime_ns, size, inode, ctime_ns], ...],
                          "draws": [[node, mesh, primitive, material, variant, facts index], ...],
                          "diagnostics": [diagnostic, ...],
                          "lights": [["<chunk>", directional, point, spot], ...]}},  # light nodes by chunk
     "parts": {"mesh": [<MeshFacts as JSON>, ...], "material": [...], "node": [...], "scene": [...],
               "chunk": [...], "draw": [<DrawInfo as JSON>, ...]},   # each part shared by many facts, once
     "facts": [[mesh, material, node, scene, chunk, draw], ...],     # DrawFacts as indices into "parts"
                                                                     # (then their "ext" object, when not empty)
     "signatures": ["<facts signature>", ...]}   # parallel to "facts"

A file is reused when its stamp (:mod:`pipeline.stamps`: mtime_ns, size, inode,
ctime_ns) matches, else when its content hash does, and its external
buffers' stats are unchanged.  Facts read back are validated again (a
cache is input, not trusted code), each part once.  Anything that does not decode is a miss.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

import orjson

from pipeline import facts as F
from pipeline.cache.store import RecordKind
from pipeline.errors import Diagnostic

SCAN = RecordKind("scan", 4)
PARTS = {"mesh": F.MeshFacts, "material": F.MaterialFacts, "node": F.NodeFacts, "scene": F.SceneFacts,
         "chunk": F.ChunkFacts, "draw": F.DrawInfo}  # the DrawFacts fields a record keeps once each
_PARTS_OF = attrgetter(*PARTS)


def encode(entry: dict, known: Callable[[int], bytes | None] | None = None) -> dict:
    """An in-memory chunk entry (see :meth:`pipeline.scan.chunk_scan.ChunkScan.entry`) as a record.

    ``known(id(part))``: a part's canonical bytes when the caller holds them (the scan's
    :class:`~pipeline.scan.gltf.draws.SharedFacts`), placed in the record as they are (an
    ``orjson.Fragment``) instead of dumping the part again: they are the part's canonical JSON, so
    the store, which writes records canonically, writes the same bytes.
    """
    files = {}
    for file, (stat, size, digest, deps, rows, diagnostics, lights) in entry["files"].items():
        files[file] = {"stat": stat, "size": size, "sha256": digest, "deps": deps, "draws": rows,
                       "diagnostics": [d.to_json() for d in diagnostics], "lights": lights}
    parts: dict[str, list] = {name: [] for name in PARTS}
    seen: dict[int, int] = {}  # id -> index in its kind's list; the facts keep the parts alive meanwhile
    facts = []
    for f in entry["facts"]:
        objects = _PARTS_OF(f)
        row = [seen.get(id(part)) for part in objects]
        if None in row:
            for k, name in enumerate(PARTS):
                if row[k] is None:
                    part = objects[k]
                    text = known(id(part)) if known is not None else None
                    row[k] = seen[id(part)] = len(parts[name])
                    parts[name].append(orjson.Fragment(text) if text is not None else F.dump(part))
        if f.ext:
            row.append({provider: dict(values) for provider, values in f.ext.items()})
        facts.append(row)
    return {"files": files, "parts": parts, "facts": facts, "signatures": entry["signatures"]}


def decode(data: dict) -> dict:
    """The record as the scanner's in-memory entry; raises on anything of another layout."""
    files = {}
    for file, f in data["files"].items():
        deps = tuple((str(p), *(int(v) for v in stat)) for p, *stat in f["deps"])
        rows = tuple((node, mesh, primitive, material, variant, int(index))
                     for node, mesh, primitive, material, variant, index in f["draws"])
        lights = tuple((str(chunk), int(d), int(p), int(s)) for chunk, d, p, s in f["lights"])
        files[str(file)] = (tuple(int(v) for v in f["stat"]), int(f["size"]), str(f["sha256"]), deps, rows,
                            tuple(Diagnostic.from_json(d) for d in f["diagnostics"]), lights)
    parts = {name: [F.load(model, p) for p in data["parts"][name]] for name, model in PARTS.items()}
    facts = [_facts(row, parts) for row in data["facts"]]
    signatures = [str(s) for s in data["signatures"]]
    if len(facts) != len(signatures) or any(r[5] >= len(facts) for e in files.values() for r in e[4]):
        raise ValueError("facts and draws disagree")
    return {"files": files, "facts": facts, "signatures": signatures}


def _facts(row: list, parts: dict[str, list]) -> F.DrawFacts:
    """One DrawFacts row: its parts by index (then its provided facts)."""
    if type(row) is not list or len(row) not in (len(PARTS), len(PARTS) + 1):
        raise ValueError("facts row of another layout")
    values = {}
    for name, index in zip(PARTS, row):
        if type(index) is not int or not 0 <= index < len(parts[name]):
            raise ValueError(f"no {name} part {index!r}")
        values[name] = parts[name][index]
    if len(row) > len(PARTS):
        values["ext"] = row[-1]
    return F.load(F.DrawFacts, values)
