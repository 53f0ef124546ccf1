"""``pipeline verify-ship``: prove that no draw of the content can miss at run time.

For every draw the content has now (scan + rules), every pass it is drawn in and every
allowed runtime axis combination of that pass (:mod:`pipeline.rules.axes`), the outputs
the runtime would load must give it:

- a row in the draw's choice for the pass in its chunk index (the pass's own choice when it
  has no runtime axes, else the row of those axis values in its ``axes`` table),
- naming the key the content requires for those values,
- that key in the index with a pipeline state the index holds,
- and each stage blob of the key in the shader library, whole (its bytes hash to its name).

Each missing piece is a :class:`Hole` naming the chunk, draw, pass, axis values and what
is missing.  No Vulkan driver is needed (``pipeline runtime check`` creates the states).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.digest import canonical_bytes
from pipeline.keys.required import AXES, DRAW_FIELDS, draw_id
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakError, PakReader


@dataclass(frozen=True)
class Hole:
    chunk: str
    draw: dict | None
    pass_name: str | None
    axes: dict
    key: str | None
    missing: str

    def line(self) -> str:
        where = self.chunk
        if self.draw is not None:
            d = self.draw
            where += f" {d['file']}#/meshes/{d['mesh']}/primitives/{d['primitive']} (node {d['node']})"
        if self.pass_name:
            where += f" {self.pass_name}"
        if self.axes:
            where += " [" + ",".join(f"{n}={_shown(v)}" for n, v in sorted(self.axes.items())) + "]"
        return f"{where}: {self.missing}"

    def to_json(self) -> dict:
        return {"chunk": self.chunk, "draw": self.draw, "pass": self.pass_name, "axes": self.axes,
                "key": self.key, "missing": self.missing}


@dataclass
class ShipResult:
    out: str
    chunks: int = 0
    draws: int = 0
    checked: int = 0  # (draw, pass, axis combination) triples
    holes: list[Hole] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.holes

    def to_json(self) -> dict:
        return {"out": self.out, "ok": self.ok, "chunks": self.chunks, "draws": self.draws, "checked": self.checked,
                "holes": [h.to_json() for h in self.holes]}


def _shown(value) -> str:
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def expected(required) -> dict[tuple, dict[str, list[tuple[dict, str]]]]:
    """draw id -> shader/pass -> [(axis values, key text)] the content requires (one ({}, key) without axes)."""
    out: dict[tuple, dict[str, list]] = {}
    for key, info in required.keys.items():
        for source, _, spec in info.bindings:
            rows = out.setdefault(tuple(draw_id(source)), {}).setdefault(f"{key.shader}/{key.pass_name}", [])
            for values in (spec.get(AXES) if spec else None) or [{}]:
                rows.append((dict(values), key.text))
    return out


def verify_ship(out: Path, by_chunk: Mapping[str, object]) -> ShipResult:
    """``by_chunk``: chunk -> its :class:`~pipeline.keys.required.RequiredKeys` now (``KeysResult.by_chunk``)."""
    result = ShipResult(str(out))
    library: PakReader | None = None
    try:
        library = PakReader(mf.library_path(out))
    except (PakError, OSError) as exc:
        result.holes.append(Hole("", None, None, {}, None, f"shader library: {exc}"))
    whole: dict[str, str | None] = {}
    for chunk, required in sorted(by_chunk.items()):
        wanted = expected(required)
        if not wanted:
            continue
        result.chunks += 1
        result.draws += len(wanted)
        try:
            manifest = mf.load_chunk_manifest(mf.chunk_manifest_path(out, chunk))
        except (mf.ManifestError, OSError) as exc:
            result.holes.append(Hole(chunk, None, None, {}, None, f"chunk index: {exc}"))
            continue
        records = {tuple(r[f] for f in DRAW_FIELDS): r for r in manifest.draws}
        for ident, passes in sorted(wanted.items(), key=lambda item: canonical_bytes(list(item[0]))):
            draw = dict(zip(DRAW_FIELDS, ident))
            record = records.get(ident)
            for label, rows in sorted(passes.items()):
                for values, key in sorted(rows, key=lambda r: canonical_bytes(r[0])):
                    result.checked += 1
                    hole = _check(manifest, record, label, values, key, library, whole)
                    if hole is not None:
                        result.holes.append(Hole(chunk, draw, label, values, key, hole))
    return result


def _check(manifest, record: Mapping | None, label: str, values: dict, key: str, library: PakReader | None,
           whole: dict[str, str | None]) -> str | None:
    """What is missing for one (draw, pass, axis values), or None."""
    if record is None:
        return "the draw is not in the chunk index"
    use = record["passes"].get(label)
    if use is None:
        return f"the draw has no choice for {label}"
    row = use if not values else next((r for r in use.get("axes", ()) if r["values"] == values and all(
        type(r["values"][n]) is type(v) for n, v in values.items())), None)
    if row is None:
        return "no row for these axis values in the draw's axes table"
    if row["key"] != key:
        return f"the index gives key {row['key']}, the content requires {key}"
    entry = manifest.keys.get(key)
    if entry is None:
        return f"key {key} is not in the chunk index"
    if row.get("pipeline") is None or row["pipeline"] not in manifest.pipelines:
        return f"no pipeline state for key {key}"
    for stage, digest in sorted(entry.stages.items()):
        if library is None:
            return "no shader library"
        if digest not in whole:
            whole[digest] = _blob_problem(library, digest)
        if whole[digest]:
            return f"{stage} blob {digest[:12]} of key {key}: {whole[digest]}"
    return None


def _blob_problem(library: PakReader, digest: str) -> str | None:
    if digest not in library:
        return "missing from the shader library"
    try:
        library.get(digest)
    except PakError as exc:
        return str(exc.diagnostics[0].message if exc.diagnostics else exc)
    return None
