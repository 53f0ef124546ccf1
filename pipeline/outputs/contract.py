"""The runtime contract of a chunk: which key and pipeline state each draw uses.

Built at cook time beside the chunk manifest's keys (docs/formats.md, "Runtime
contract"):

- ``draws``: one record per draw (file, node, mesh, primitive, material, variant) with,
  per ``<shader>/<pass>``, the key it needs, the pipeline state it is drawn with and
  (when the pass declares one) the fallback pipeline state for the same render state
  and specialization values;
- ``pipelines``: pipeline states by id, deduplicated: key + vertex layout (from the
  vertex blob's reflection) + render state + specialization constant values;
- ``reflection``: per stage blob digest, its reflection (:mod:`pipeline.outputs.reflection`).

A pass with runtime axes (:mod:`pipeline.rules.axes`) gives its draw an ``axes`` table:
one ``{"values": {axis: value}, "key", "pipeline"}`` per allowed combination, sorted by
its values; the pass's own ``key`` and ``pipeline`` are those of the first combination
(every axis at its first allowed value).  The runtime picks a row by the current axis
values; nothing re-runs the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from pipeline.outputs.reflection import ReflectionError, vertex_layout
from pipeline.digest import canonical_bytes, stable_hash
from pipeline.keys.fallback import fallback_keys
from pipeline.keys.required import AXES, DRAW_FIELDS, KeyUses, draw_id
from pipeline.rules.axes import axes_of


def pipeline_state(key: str, layout: list[dict], render_state: Mapping, spec: Mapping[str, tuple[int, object]]
                   ) -> tuple[str, dict]:
    """(id, document) of one pipeline state; the id is the stable hash of the document."""
    doc = {"key": key, "vertex_layout": layout, "render_state": dict(render_state),
           "specialization": {n: {"constant_id": cid, "value": v} for n, (cid, v) in sorted(spec.items())}}
    return stable_hash(doc), doc


class ContractBuilder:
    """Collects a chunk's draws and pipeline states, key by key."""

    def __init__(self, reflection: Callable[[str], dict], families: Mapping):
        self.reflection = reflection
        self.families = families
        self.warnings: list[str] = []  # reflection unavailable: draws keep their keys, without pipeline states
        self.pipelines: dict[str, dict] = {}
        self.blobs: dict[str, dict] = {}
        self.draws: dict[tuple, dict] = {}
        self._states: dict[tuple, tuple[str, dict]] = {}  # (key, render state, spec values) -> (id, document)
        self._by_object: dict[tuple, tuple] = {}  # (key, id of a state dict, id of a spec dict) -> (them, the above)
        self._rows: dict[tuple, tuple] = {}  # (key, id of its combinations, pipeline) -> (them, axis rows, first?)
        self.row_bytes: dict[int, bytes] = {}  # id of an axis row -> canonical bytes of its values (rows live in _rows)

    def _layout(self, shader: str, stages: Mapping[str, str]) -> list[dict]:
        for digest in stages.values():
            self.blobs[digest] = self.reflection(digest)
        vertex = stages.get("vertex")
        if vertex is None:
            return []
        return vertex_layout(self.blobs[vertex], tuple(self.families[shader].instance_inputs))

    def _spec(self, shader: str, values: Mapping) -> dict[str, tuple[int, object]]:
        features = self.families[shader].features
        return {n: (features[n].constant_id, v) for n, v in values.items() if n != AXES}

    def _state(self, key, layout: list[dict], state: Mapping, spec: Mapping) -> tuple[str, dict]:
        """:func:`pipeline_state` of a draw, made once per distinct (key, render state, specialization
        values) of the chunk: the draws of a key mostly share them (its layout is the key's)."""
        same = self._by_object.get((key.text, id(state), id(spec)))
        if same is not None and same[0] is state and same[1] is spec:  # the draws of one use share these dicts
            return same[2]
        try:
            memo = (key.text, tuple(sorted(state.items())), tuple(sorted(i for i in spec.items() if i[0] != AXES)))
            hash(memo)
        except TypeError:  # a value that is not hashable: made for this draw alone
            return pipeline_state(key.text, layout, state, self._spec(key.shader, spec))
        found = self._states.get(memo)
        if found is None:
            found = self._states[memo] = pipeline_state(key.text, layout, state, self._spec(key.shader, spec))
        self._by_object[(key.text, id(state), id(spec))] = (state, spec, found)  # kept alive: ids stay theirs
        return found

    def add_key(self, key, stages: Mapping[str, str], bindings: Iterable[tuple]) -> None:
        """Every draw of ``key`` (``bindings``: (draw, render state, specialization values), :class:`KeyUses`)."""
        layout = None
        if len(stages) >= 2:  # else a stage failed to compile: no pipeline (the manifest lists the error)
            try:
                layout = self._layout(key.shader, stages)
            except ReflectionError as exc:
                self.warnings += [d.message for d in exc.diagnostics]
        for draw, state, spec in bindings:
            ident = draw_id(draw)
            record = self.draws.setdefault(tuple(ident), dict(zip(DRAW_FIELDS, ident)) | {"passes": {}})
            label = f"{key.shader}/{key.pass_name}"
            combinations = spec.get(AXES) if spec else None
            if combinations is None:
                use = record["passes"][label] = {"key": key.text}
            else:
                use = record["passes"].setdefault(label, {})
            pid = None
            if layout is not None:
                pid, doc = self._state(key, layout, state, spec)
                self.pipelines[pid] = doc
                if combinations is None:
                    use["pipeline"] = pid
            if combinations is not None:
                self._add_axes(key, use, combinations, pid)

    def _add_axes(self, key, use: dict, combinations: list, pid: str | None) -> None:
        memo = (key.text, id(combinations), pid)
        found = self._rows.get(memo)
        if found is None or found[0] is not combinations:  # the draws of one use share its combinations
            found = self._rows[memo] = (combinations, *self._axis_rows(key, combinations, pid))
        use.setdefault("axes", []).extend(found[1])
        if found[2]:
            use["key"] = key.text
            if pid is not None:
                use["pipeline"] = pid

    def _axis_rows(self, key, combinations: list, pid: str | None) -> tuple[list[dict], bool]:
        """The rows ``combinations`` give a draw (shared by every draw of the use: never changed), and
        whether one of them is the pass's first combination (every axis at its first allowed value)."""
        allowed = axes_of(self.families[key.shader])
        rows, first = [], False
        for values in combinations:
            row = {"values": dict(values), "key": key.text}
            if pid is not None:
                row["pipeline"] = pid
            rows.append(row)
            self.row_bytes[id(row)] = canonical_bytes(row["values"])
            if all(allowed.get(n, (v,))[0] == v and type(allowed.get(n, (v,))[0]) is type(v) for n, v in values.items()):
                first = True
        return rows, first

    def add_fallback(self, key, stages: Mapping[str, str], by_pass: Mapping[str, list]) -> None:
        """The fallback pipeline state of every draw of the fallback key's family and pass."""
        if len(stages) < 2:
            return
        try:
            layout = self._layout(key.shader, stages)
        except ReflectionError as exc:
            self.warnings += [d.message for d in exc.diagnostics]
            return
        label = f"{key.shader}/{key.pass_name}"
        for draw, state, spec in by_pass.get(label, ()):
            pid, doc = self._state(key, layout, state, spec)
            record = self.draws.get(tuple(draw_id(draw)))
            if record is not None and label in record["passes"]:  # else its own key failed to compile
                self.pipelines[pid] = doc
                record["passes"][label]["fallback"] = pid

    def draw_list(self) -> list[dict]:
        for record in self.draws.values():
            for use in record["passes"].values():
                if "axes" in use:
                    use["axes"].sort(key=lambda row: self.row_bytes[id(row)])
        return sorted(self.draws.values(), key=lambda d: canonical_bytes([d[f] for f in DRAW_FIELDS]))


def add_fallbacks(found, families: Mapping) -> dict[str, dict[str, str]]:
    """Add every declared fallback key to each chunk with draws of its family (``found`` is a
    :class:`~pipeline.keys.incremental.CookInput`, changed in place).  Returns chunk -> {shader/pass: key text}."""
    per_family = {name: fallback_keys(rs) for name, rs in families.items()}
    found.keys = dict(found.keys)
    chosen: dict[str, dict[str, str]] = {}
    for chunk, uses in list(found.by_chunk.items()):
        uses = found.by_chunk[chunk] = dict(uses)
        for shader in sorted({key.shader for key in uses}):
            for pass_name, key in sorted(per_family.get(shader, {}).items()):
                if key not in uses:  # its states: those of the draws it may stand in for
                    same = [u for k, u in uses.items() if (k.shader, k.pass_name) == (shader, pass_name)]
                    states = list({canonical_bytes(s): s for u in same for s in u.render_states}.values())
                    spec: dict[str, list] = {}
                    for u in same:
                        for name, values in u.specialization.items():
                            spec.setdefault(name, []).extend(v for v in values if v not in spec.get(name, []))
                    uses[key] = KeyUses([], states, spec)
                found.keys.setdefault(key, None)
                chosen.setdefault(chunk, {})[f"{shader}/{pass_name}"] = key.text
    return chosen


def bindings_by_pass(required: Mapping) -> dict[str, list]:
    """shader/pass -> every (draw, render state, specialization values) of the chunk's keys."""
    out: dict[str, list] = {}
    for key, uses in required.items():
        out.setdefault(f"{key.shader}/{key.pass_name}", []).extend(uses.bindings)
    return out
