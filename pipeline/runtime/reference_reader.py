"""A reference reader of a cook's outputs (output format 5), written to be ported to an engine.

It uses the Python standard library only (``json``, ``struct``, ``hashlib``) and nothing
else of this package, so the code below is the whole of what a loader needs: open the
output folder's shader library, read a chunk index, and for each draw find the key, the
pipeline state and the stage blobs of each of its passes.  docs/formats.md is the
specification; this module is its executable summary, checked against the package's own
reader by the tests.

Order of reads (what makes it safe while a cook replaces files): open the library first,
then read the chunk index; if the index names a blob the library lacks, a cook replaced
both in between: open both again.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"\x89PPAK\r\n\x1a"
LIBRARY_VERSION, INDEX_FORMAT = 3, 5
HEADER = struct.Struct("<8sIIIIQ32sQQ")  # magic, version, count, alignment, 0, file size, checksum, 0, 0
ENTRY = struct.Struct("<32sQQQQ")        # blob sha256, offset, size, reflection offset, reflection size
DRAW_FIELDS = ("file", "node", "mesh", "primitive", "material", "variant")


class OutputError(Exception):
    """An output file that this reader cannot read."""


class Library:
    """``shaders.pak``: blobs by SHA-256, each with its reflection (JSON) when it has one."""

    def __init__(self, path: Path | str):
        self.data = Path(path).read_bytes()
        magic, version, count, _, _, size, _, _, _ = HEADER.unpack_from(self.data)
        if magic != MAGIC or version != LIBRARY_VERSION or size != len(self.data):
            raise OutputError(f"{path}: not a shader library of version {LIBRARY_VERSION}")
        self.index = {}
        for i in range(count):
            digest, at, n, refl_at, refl_n = ENTRY.unpack_from(self.data, HEADER.size + ENTRY.size * i)
            self.index[digest.hex()] = (at, n, refl_at, refl_n)

    def blob(self, digest: str) -> bytes:
        at, n, _, _ = self.index[digest]
        blob = self.data[at:at + n]
        if hashlib.sha256(blob).hexdigest() != digest:
            raise OutputError(f"blob {digest[:12]} does not match its hash")
        return blob

    def reflection(self, digest: str) -> dict | None:
        _, _, at, n = self.index[digest]
        return json.loads(self.data[at:at + n]) if n else None


@dataclass
class Pass:
    key: str                  # the permutation key's text
    stages: dict              # stage name -> blob sha256 (in the library)
    pipeline: dict | None     # the pipeline state (key, render_state, specialization, vertex_layout), or None
    fallback: dict | None     # the fallback key's pipeline state for this draw, or None
    axes: list | None = None  # runtime axes: [(values {axis: value}, key text, stages, pipeline state or None)]

    def pick(self, values: dict) -> tuple:
        """(key text, stages, pipeline state) for the runtime axis values ``values``; None when not cooked."""
        if not self.axes:
            return self.key, self.stages, self.pipeline
        for row_values, key, stages, pipeline in self.axes:
            if all(v == row_values.get(n) and type(v) is type(row_values.get(n)) for n, v in values.items()):
                return key, stages, pipeline
        return None


class Chunk:
    """A chunk index: its keys, pipeline states and draws, every position resolved."""

    def __init__(self, path: Path | str):
        doc = json.loads(Path(path).read_bytes())
        if doc.get("format") != INDEX_FORMAT:
            raise OutputError(f"{path}: chunk index format {doc.get('format')} is not {INDEX_FORMAT}")
        self.name, self.blobs, self.axis_values = doc["chunk"], doc["blobs"], doc.get("axis_values", [])
        self.keys = [self._key(row, doc) for row in doc["keys"]]
        self.pipelines = [{"key": self.keys[k]["text"], "render_state": doc["render_states"][r],
                           "specialization": doc["specializations"][s], "vertex_layout": doc["layouts"][lay]}
                          for k, r, lay, s in doc["pipelines"]]
        self.draws = []
        for row in doc["draws"]:
            draw = dict(zip(DRAW_FIELDS, [doc["files"][row[0]], *row[1:-1]]))
            draw["passes"] = {doc["passes"][use[0]]: self._pass(use) for use in doc["uses"][row[-1]]}
            self.draws.append(draw)

    def _key(self, row: list, doc: dict) -> dict:
        if isinstance(row[0], str):  # text and {name: value} given as they are
            text = row[0]
        else:                        # text rebuilt from the names of its pass and its values
            label, names = doc["key_passes"][row[0]]
            text = label + "{" + ",".join(f"{n}={_value(v)}" for n, v in zip(names, row[1])) + "}"
        return {"text": text, "stages": {stage: self.blobs[i] for stage, i in row[2].items()}}

    def _pass(self, use: list) -> Pass:
        key = self.keys[use[1]]
        pipeline = self.pipelines[use[2]] if use[2] is not None else None
        fallback = self.pipelines[use[3]] if len(use) > 3 and use[3] is not None else None
        axes = None
        if len(use) > 4:  # [axis values, key, pipeline or null] per allowed combination
            axes = [(self.axis_values[v], self.keys[k]["text"], self.keys[k]["stages"],
                     self.pipelines[p] if p is not None else None) for v, k, p in use[4]]
        return Pass(key["text"], key["stages"], pipeline, fallback, axes)


def pipeline_id(state: dict) -> str:
    """A pipeline state's id: the SHA-256 of its canonical JSON (sorted keys, no spaces, UTF-8)."""
    return hashlib.sha256(json.dumps(state, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode()).hexdigest()


def load(out: Path | str, chunk: str, attempts: int = 20) -> tuple[Chunk, Library]:
    """A chunk of the output folder ``out`` (``forest/c00``; ``.`` is ``.root``) with the library holding its blobs."""
    for _ in range(attempts):
        library = Library(Path(out) / "shaders.pak")
        index = Chunk(Path(out) / f"{'.root' if chunk == '.' else chunk}.json")
        if all(digest in library.index for digest in index.blobs):
            return index, library
    raise OutputError(f"{out}: the library lacks blobs of chunk {chunk}")


def _value(value) -> str:
    """A feature value as key text writes it: bools as 0/1."""
    return ("1" if value else "0") if isinstance(value, bool) else str(value)
