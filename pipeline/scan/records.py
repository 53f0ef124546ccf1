"""Scan records: the facts of a chunk's files, reused while the files do not change.

``scan:<chunk key>`` (version 3), one per chunk and scan configuration (the chunk key
hashes the world root, chunk, level, grid, reader limits, optional facts, the facts
schema and :data:`pipeline.scan.scanner.FORMAT_VERSION`)::

    {"files": {"<file>": {"stat": [mtime_ns, size, inode, ctime_ns], "size": int, "sha256": "<content hash>",
                          "deps": [["<external buffer path>", mtime_ns, size, inode, ctime_ns], ...],
                          "draws": [[node, mesh, primitive, material, variant, facts index], ...],
                          "diagnostics": [diagnostic, ...],
                          "lights": [["<chunk>", directional, point, spot], ...]}},  # light nodes by chunk
     "facts": [<DrawFacts as JSON>, ...],        # de-duplicated within the chunk
     "signatures": ["<facts signature>", ...]}   # parallel to "facts"

A file is reused when its stamp (:mod:`pipeline.stamps`: mtime_ns, size, inode,
ctime_ns) matches, else when its content hash does, and its external
buffers' stats are unchanged.  Facts read back are validated again (a
cache is input, not trusted code).  Anything that does not decode is a miss.
"""

from __future__ import annotations

from pipeline.cache.store import RecordKind
from pipeline.errors import Diagnostic
from pipeline.facts import DrawFacts

SCAN = RecordKind("scan", 3)


def encode(entry: dict) -> dict:
    """An in-memory chunk entry (see the scanner's ``_ChunkScan.entry``) as a record."""
    files = {}
    for file, (stat, size, digest, deps, rows, diagnostics, lights) in entry["files"].items():
        files[file] = {"stat": stat, "size": size, "sha256": digest, "deps": deps, "draws": rows,
                       "diagnostics": [d.to_json() for d in diagnostics], "lights": lights}
    parts: dict = {}  # the facts' parts shared between draws, dumped once (the facts stay alive meanwhile)
    return {"files": files, "facts": [f.to_json(parts) for f in entry["facts"]],
            "signatures": entry["signatures"]}


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
    facts = [DrawFacts.model_validate(f) for f in data["facts"]]
    signatures = [str(s) for s in data["signatures"]]
    if len(facts) != len(signatures) or any(r[5] >= len(facts) for e in files.values() for r in e[4]):
        raise ValueError("facts and draws disagree")
    return {"files": files, "facts": facts, "signatures": signatures}
