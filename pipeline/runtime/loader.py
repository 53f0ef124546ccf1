"""Loading a cooked chunk: index + shader library -> shader modules -> pipelines, and draws -> pipelines.

:class:`Loader` is what an engine does at chunk load: open ``<out>/shaders.pak``, read
``<out>/<chunk>.json``, create a shader module per stage blob it names and a pipeline per
pipeline state (the PSO list), then answer "which pipeline draws this draw in this pass".
When a draw's key is not in the chunk (no blob for it, or its pipeline failed), the
loader answers with the pass's fallback pipeline and appends the request to the miss
log (:mod:`pipeline.runtime.misses`) instead of failing the draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.outputs.contract import DRAW_FIELDS
from pipeline.outputs.read_outputs import load_chunk
from pipeline.runtime.device import Device
from pipeline.runtime.misses import MissLog
from pipeline.runtime.pipelines import Created, PipelineFactory


@dataclass
class Failure:
    chunk: str
    pipeline: str | None
    key: str | None
    message: str

    def to_json(self) -> dict:
        return {"chunk": self.chunk, "pipeline": self.pipeline, "key": self.key, "message": self.message}


@dataclass
class LoadedChunk:
    manifest: mf.ChunkManifest
    modules: dict[str, object] = field(default_factory=dict)      # blob digest -> VkShaderModule
    pipelines: dict[str, Created] = field(default_factory=dict)   # pipeline state id -> created pipeline
    failures: list[Failure] = field(default_factory=list)
    messages: list[Failure] = field(default_factory=list)         # validation messages, by pipeline
    _draws: dict[tuple, dict] | None = None

    def draw(self, draw_id: tuple) -> dict | None:
        if self._draws is None:
            self._draws = {tuple(r[f] for f in DRAW_FIELDS): r for r in self.manifest.draws}
        return self._draws.get(tuple(draw_id))


class Loader:
    """Chunks of one output folder, loaded on one device."""

    def __init__(self, device: Device, out: Path | str, misses: MissLog | None = None):
        self.device = device
        self.out = Path(out)
        self.factory = PipelineFactory(device)
        self.misses = misses
        self.chunks: dict[str, LoadedChunk] = {}
        self._library = None  # the shader library, kept open across chunk loads (reopened when a cook replaced it)
        self.created: dict[str, Created] = {}  # across chunks: one pipeline per state id

    def load(self, chunk: str) -> LoadedChunk:
        found = self.chunks.get(chunk)
        if found is None:
            found = self.chunks[chunk] = self._load(chunk)
        return found

    def _load(self, chunk: str) -> LoadedChunk:
        manifest, pak = load_chunk(self.out, chunk, self._library)  # read again when a cook replaced them
        self._library = pak
        loaded = LoadedChunk(manifest)
        for digest in sorted(mf.module_hashes(manifest)):
            if digest not in pak:
                continue  # the key is missing: draws that need it take the fallback
            try:
                loaded.modules[digest] = self.factory.module(digest, pak.get(digest))
            except Exception as exc:  # noqa: BLE001 - any failure is reported per blob
                loaded.failures.append(Failure(chunk, None, None, f"shader module {digest[:12]}: {_why(exc)}"))
        stages_of = {e.key: e.stages for e in manifest.keys.values()}
        for pid, state in sorted(manifest.pipelines.items()):
            stages = stages_of.get(state["key"], {})
            if not stages or any(d not in loaded.modules for d in stages.values()):
                continue
            self._create(loaded, pid, state, stages)
        return loaded

    def _create(self, loaded: LoadedChunk, pid: str, state: dict, stages: dict) -> None:
        created = self.created.get(pid)
        if created is not None:
            loaded.pipelines[pid] = created
            return
        before = len(self.device.messages)
        try:
            reflections = {s: loaded.manifest.reflection[d] for s, d in stages.items()}
            created = self.factory.create(state, {s: loaded.modules[d] for s, d in stages.items()}, reflections)
        except Exception as exc:  # noqa: BLE001 - a failed pipeline is a result, not a crash
            loaded.failures.append(Failure(loaded.manifest.chunk, pid, state["key"], _why(exc)))
        else:
            loaded.pipelines[pid] = self.created[pid] = created
        for message in self.device.messages[before:]:
            loaded.messages.append(Failure(loaded.manifest.chunk, pid, state["key"], message))

    def pipeline_for(self, chunk: str, draw_id: tuple, label: str, axes: Mapping | None = None
                     ) -> tuple[Created | None, dict | None, bool]:
        """(pipeline, its state, used the fallback) for one draw in one ``shader/pass``; ``axes``: the runtime
        axis values now (a pass with an axes table takes the row of those values, :func:`pick`)."""
        loaded = self.load(chunk)
        record = loaded.draw(draw_id)
        use = (record or {}).get("passes", {}).get(label)
        row, asked = pick(use, axes)
        if row is not None and row.get("pipeline") in loaded.pipelines:
            return loaded.pipelines[row["pipeline"]], loaded.manifest.pipelines[row["pipeline"]], False
        key = use["key"] if use else None
        if self.misses is not None:
            self.misses.append(key=key, chunk=chunk, draw=dict(zip(DRAW_FIELDS, draw_id)), pass_=label, axes=asked)
        fallback = (use or {}).get("fallback")
        if fallback is None or fallback not in loaded.pipelines:
            return None, None, True
        return loaded.pipelines[fallback], loaded.manifest.pipelines[fallback], True

    def close(self) -> None:
        self.factory.close()


def pick(use: Mapping | None, axes: Mapping | None) -> tuple[Mapping | None, dict | None]:
    """(the choice for the axis values ``axes``, the values asked when no row holds them): a pass without
    an axes table is its own choice; with one, the row whose values all equal ``axes``' (an axis not given
    takes its value in the pass's own choice, the first combination)."""
    if use is None or "axes" not in use or not axes:
        return use, None
    own = [r for r in use["axes"] if r["key"] == use["key"] and r.get("pipeline") == use.get("pipeline")]
    first = (own or use["axes"] or [{"values": {}}])[0]["values"]
    wanted = {n: axes.get(n, v) for n, v in first.items()}
    for row in use["axes"]:
        if all(row["values"].get(n) == v and type(row["values"].get(n)) is type(v) for n, v in wanted.items()):
            return row, None
    return None, wanted


def _why(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
