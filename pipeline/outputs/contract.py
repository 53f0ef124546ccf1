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

import functools
import operator
from collections.abc import Callable, Iterable, Mapping

import orjson

from pipeline.outputs.reflection import ReflectionError, vertex_layout
from pipeline.digest import canonical_bytes, stable_hash
from pipeline.keys.fallback import fallback_keys
from pipeline.keys.recorded import ExtendedKeys, release_uses
from pipeline.keys.required import AXES, DRAW_FIELDS, KeyUses, draw_id
from pipeline.rules.axes import axes_of


def pipeline_state(key: str, layout: list[dict], render_state: Mapping, spec: Mapping[str, tuple[int, object]]
                   ) -> tuple[str, dict]:
    """(id, document) of one pipeline state; the id is the stable hash of the document."""
    doc = {"key": key, "vertex_layout": layout, "render_state": dict(render_state),
           "specialization": {n: {"constant_id": cid, "value": v} for n, (cid, v) in sorted(spec.items())}}
    return stable_hash(doc), doc


MAX_SHARED = 1 << 16  # pipeline states a cook's chunks share; past that, they start afresh
_SET, _AXES, _FALLBACK = 0, 1, 2  # what a key (or a fallback key) does to a draw's pass, in the order it comes
_NOTHING = object()  # no binding's render state nor specialization values
_canon = functools.partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)  # canonical_bytes, called from C by sorted


class ContractBuilder:
    """Collects a chunk's draws and pipeline states, key by key.

    The draws of a key that share one render state and one specialization values object share
    everything the contract gives them, so that is made once per such group: each draw only
    records, per pass, what the keys and fallback keys did to it (a short list of steps).  Draws
    with the same steps share one ``passes`` object, made once when the draw records are made."""

    def __init__(self, reflection: Callable[[str], dict], families: Mapping, shared: dict | None = None):
        """``shared``: what the chunks of one cook (same families, same blobs) share: their pipeline states."""
        self.reflection = reflection
        self.families = families
        self.warnings: list[str] = []  # reflection unavailable: draws keep their keys, without pipeline states
        self.pipelines: dict[str, dict] = {}
        self.blobs: dict[str, dict] = {}
        self._steps: dict[tuple, dict[str, list]] = {}  # draw id -> shader/pass -> steps (_SET, _AXES, _FALLBACK)
        self._draws: dict[int, tuple] = {}  # id of a draw object -> (it, its steps by pass)
        self._fast: dict[str, dict[int, tuple]] = {}  # shader/pass -> id of a draw object -> (it, its steps)
        shared = {} if shared is None else shared
        # (key, vertex blob, render state items, spec items) -> (id, document); items -> the document's copy
        self._known: dict[tuple, tuple[str, dict]] = shared.setdefault("pipeline states", {})
        self._copies: dict[tuple, dict] = shared.setdefault("render states", {})
        self._spec_docs: dict[tuple, dict] = shared.setdefault("specializations", {})  # (family, items) -> doc
        self._made_rows: dict[tuple, tuple] = shared.setdefault("axis rows", {})  # -> (rows, first?, their bytes)
        self._reflections: dict[str, dict] = shared.setdefault("reflections", {})  # blob -> its reflection
        self._sorted: dict[int, tuple] = {}  # id of a render state or spec values dict -> (it, its items)
        self._by_object: dict[tuple, tuple] = {}  # (key, id of a state dict, id of a spec dict) -> (them, the above)
        self._rows: dict[tuple, tuple] = {}  # (key, id of its combinations, pipeline) -> (them, axis rows, first?)
        self._row_lists: dict[int, tuple] = {}  # id of (axis rows, their bytes, first?) -> it (kept: ids stay)
        self._layouts: dict[tuple, list[dict]] = {}  # (vertex blob, instance inputs) -> vertex layout

    def _layout(self, shader: str, stages: Mapping[str, str]) -> list[dict]:
        blobs, known = self.blobs, self._reflections
        for digest in stages.values():
            if digest not in blobs:
                found = known.get(digest)
                blobs[digest] = found if found is not None else known.setdefault(digest, self.reflection(digest))
        vertex = stages.get("vertex")
        if vertex is None:
            return []
        inputs = tuple(self.families[shader].instance_inputs)
        found = self._layouts.get((vertex, inputs))
        if found is None:  # the keys of one vertex blob share its layout (one object: serialized once)
            found = self._layouts[(vertex, inputs)] = vertex_layout(blobs[vertex], inputs)
        return found

    def _spec(self, shader: str, values: Mapping) -> dict[str, tuple[int, object]]:
        features = self.families[shader].features
        return {n: (features[n].constant_id, v) for n, v in values.items() if n != AXES}

    def _state(self, key, layout: list[dict], state: Mapping, spec: Mapping, vertex: str | None = None
               ) -> tuple[str, dict]:
        """:func:`pipeline_state` of a draw, made once per distinct (key, vertex blob, render state,
        specialization values) of the cook (of the chunk without ``shared``): the draws of a key mostly
        share them, and the chunks of a cook most of theirs."""
        same = self._by_object.get((key.text, id(state), id(spec)))
        if same is not None and same[0] is state and same[1] is spec:  # the draws of one use share these dicts
            return same[2]
        try:
            items = self._items(state, False), self._items(spec, True)
            memo = (key.text, vertex, *items)
            found = self._known.get(memo)
        except TypeError:  # a value that is not hashable: made for this draw alone
            return pipeline_state(key.text, layout, state, self._spec(key.shader, spec))
        if found is None:
            if len(self._known) >= MAX_SHARED:
                for table in (self._known, self._copies, self._spec_docs):
                    table.clear()
            pid, doc = pipeline_state(key.text, layout, state, self._spec(key.shader, spec))
            # equal render states and specialization values: one object each (the index serializes it once)
            doc["render_state"] = self._copies.setdefault(items[0], doc["render_state"])
            doc["specialization"] = self._spec_docs.setdefault((key.shader, items[1]), doc["specialization"])
            found = self._known[memo] = (pid, doc)
        self._by_object[(key.text, id(state), id(spec))] = (state, spec, found)  # kept alive: ids stay theirs
        return found

    def _items(self, values: Mapping, spec: bool) -> tuple:
        """The sorted ``(name, type, value)`` of a render state (or specialization values but :data:`AXES`),
        made once per dict object; TypeError when a value is not hashable."""
        found = self._sorted.get(id(values))
        if found is not None and found[0] is values:
            return found[1]
        items = tuple((n, type(v), v) for n, v in sorted(values.items()) if not (spec and n == AXES))
        hash(items)
        self._sorted[id(values)] = (values, items)  # kept alive: its id stays its own
        return items

    def add_key(self, key, stages: Mapping[str, str], bindings: Iterable[tuple]) -> None:
        """Every draw of ``key`` (``bindings``: (draw, render state, specialization values), :class:`KeyUses`)."""
        layout = None
        if len(stages) >= 2:  # else a stage failed to compile: no pipeline (the manifest lists the error)
            try:
                layout = self._layout(key.shader, stages)
            except ReflectionError as exc:
                self.warnings += [d.message for d in exc.diagnostics]
        label, vertex, made = f"{key.shader}/{key.pass_name}", stages.get("vertex"), {}
        fast, found = self._fast.setdefault(label, {}), (_NOTHING, _NOTHING, None)
        for draw, state, spec in bindings:
            if state is not found[0] or spec is not found[1]:  # the draws of one use come in a row
                found = made.get((id(state), id(spec)))
                if found is None:  # the draws of one use share these objects: their step is made once
                    found = made[(id(state), id(spec))] = (state, spec, self._step(key, layout, state, spec, vertex))
            mine = fast.get(id(draw))
            if mine is not None and mine[0] is draw:
                mine[1].append(found[2])
            else:
                self._steps_of(draw, label, True).append(found[2])

    def _step(self, key, layout: list[dict] | None, state: Mapping, spec: Mapping, vertex: str | None) -> tuple:
        """What ``key`` does to the pass of a draw it binds with ``state`` and ``spec`` (its pipeline state added)."""
        combinations = spec.get(AXES) if spec else None
        pid = None
        if layout is not None:
            pid, doc = self._state(key, layout, state, spec, vertex)
            self.pipelines[pid] = doc
        if combinations is None:
            return (_SET, key.text, pid)
        made, first = self._add_axes(key, combinations, pid)
        return (_AXES, key.text, pid, id(made), first)

    def _steps_of(self, draw, label: str, make: bool) -> list | None:
        """The steps of ``draw``'s pass ``label`` (made when ``make``, else None when no key gave it one)."""
        known = self._draws.get(id(draw))
        if known is not None and known[0] is draw:
            steps = known[1]
        else:
            ident = tuple(draw_id(draw))
            steps = self._steps.get(ident)
            if steps is None:
                if not make:
                    return None
                steps = self._steps[ident] = {}
            self._draws[id(draw)] = (draw, steps)  # kept alive: its id stays its own
        mine = steps.get(label)
        if mine is None:
            if not make:
                return None
            mine = steps[label] = []
        self._fast[label][id(draw)] = (draw, mine)  # kept alive: its id stays its own
        return mine

    def _add_axes(self, key, combinations: list, pid: str | None) -> tuple[tuple, bool]:
        """(the rows ``combinations`` give a draw, their values' canonical bytes, first?), made once per
        use, and whether one of them is the pass's first combination."""
        memo = (key.text, id(combinations), pid)
        found = self._rows.get(memo)
        if found is None or found[0] is not combinations:  # the draws of one use share its combinations
            found = self._rows[memo] = (combinations, self._cooked_rows(key, combinations, pid))
            self._row_lists[id(found[1])] = found[1]
        return found[1], found[1][2]

    def _cooked_rows(self, key, combinations: list, pid: str | None) -> tuple[list[dict], list[bytes], bool]:
        """:meth:`_axis_rows`, made once per cook for equal combinations (of the same types)."""
        try:
            content = (key.text, pid, tuple(tuple((n, type(v), v) for n, v in c.items()) for c in combinations))
            made = self._made_rows.get(content)
        except TypeError:  # a value that is not hashable
            return self._axis_rows(key, combinations, pid)
        if made is None:
            if len(self._made_rows) >= MAX_SHARED:
                self._made_rows.clear()
            made = self._made_rows[content] = self._axis_rows(key, combinations, pid)
        return made

    def _axis_rows(self, key, combinations: list, pid: str | None) -> tuple[list[dict], list[bytes], bool]:
        """The rows ``combinations`` give a draw (shared by every draw of the use: never changed), the
        canonical bytes of their values, and whether one of them is the pass's first combination (every
        axis at its first allowed value)."""
        allowed = axes_of(self.families[key.shader])
        rows, raws, first = [], [], False
        for values in combinations:
            row = {"values": dict(values), "key": key.text}
            if pid is not None:
                row["pipeline"] = pid
            rows.append(row)
            raws.append(canonical_bytes(row["values"]))
            if all(allowed.get(n, (v,))[0] == v and type(allowed.get(n, (v,))[0]) is type(v) for n, v in values.items()):
                first = True
        return rows, raws, first

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
        made: dict[tuple, tuple] = {}
        used: dict[str, dict] = {}
        fast, found = self._fast.setdefault(label, {}), (_NOTHING, _NOTHING)
        for draw, state, spec in by_pass.get(label, ()):
            if state is not found[0] or spec is not found[1]:
                found = made.get((id(state), id(spec)))
                if found is None:
                    pid, doc = self._state(key, layout, state, spec, stages.get("vertex"))
                    found = made[(id(state), id(spec))] = (state, spec, pid, doc, (_FALLBACK, pid))
            mine = fast.get(id(draw))
            mine = mine[1] if mine is not None and mine[0] is draw else self._steps_of(draw, label, False)
            if mine is not None and mine[-1] is not found[4]:  # else its own key failed to compile
                used.setdefault(found[2], found[3])
                if mine[-1] != found[4]:
                    mine.append(found[4])
        self.pipelines.update(used)  # the states some draw of the pass was given, in that order

    def _use(self, steps: tuple) -> dict:
        """A draw's pass from its steps, in order (its axis rows sorted by their values)."""
        use: dict = {}
        rows: list[tuple[bytes, dict]] = []  # the axis rows, with their values' canonical bytes
        for step in steps:
            if step[0] == _SET:
                use = {"key": step[1]} if step[2] is None else {"key": step[1], "pipeline": step[2]}
                rows = []
            elif step[0] == _AXES:
                made = self._row_lists[step[3]]
                use.setdefault("axes", rows)
                rows.extend(zip(made[1], made[0]))
                if step[4]:
                    use["key"] = step[1]
                    if step[2] is not None:
                        use["pipeline"] = step[2]
            else:
                use["fallback"] = step[1]
        if "axes" in use:
            use["axes"] = [row for _, row in sorted(rows, key=operator.itemgetter(0))]
        return use

    @property
    def draws(self) -> dict[tuple, dict]:
        """Draw id -> its record (``{file, node, ..., "passes": {shader/pass: {key, pipeline, fallback?,
        axes?}}}``); draws with the same passes share one ``passes`` object (nobody changes it)."""
        uses: dict[tuple, dict] = {}
        shared: dict[tuple, dict] = {}
        records = {}
        for ident, steps in self._steps.items():
            made = tuple(zip(steps, map(tuple, steps.values())))  # (shader/pass, its steps) in order
            passes = shared.get(made)
            if passes is None:
                passes = shared[made] = {}
                for label, mine in made:
                    use = uses.get(mine)
                    passes[label] = use if use is not None else uses.setdefault(mine, self._use(mine))
            records[ident] = dict(zip(DRAW_FIELDS, ident), passes=passes)
        return records

    def draw_list(self) -> list[dict]:
        records = self.draws
        return [records[ident] for ident in sorted(records, key=_canon)]


def add_fallbacks(found, families: Mapping) -> dict[str, dict[str, str]]:
    """Add every declared fallback key to each chunk with draws of its family (``found`` is a
    :class:`~pipeline.keys.incremental.CookInput`, changed in place).  Returns chunk -> {shader/pass: key text}."""
    per_family = {name: fallback_keys(rs) for name, rs in families.items()}
    found.keys = dict(found.keys)
    chosen: dict[str, dict[str, str]] = {}
    for chunk, uses in list(found.by_chunk.items()):
        added: dict = {}  # the chunk's own uses are left as they are: its fallback keys go beside them
        for shader in sorted({key.shader for key in uses}):
            for pass_name, key in sorted(per_family.get(shader, {}).items()):
                if key not in uses and key not in added:  # its states: those of the draws it may stand in for
                    same = [u for k, u in uses.items() if (k.shader, k.pass_name) == (shader, pass_name)]
                    states = list({canonical_bytes(s): s for u in same for s in u.render_states}.values())
                    spec: dict[str, list] = {}
                    for u in same:
                        for name, values in u.specialization.items():
                            spec.setdefault(name, []).extend(v for v in values if v not in spec.get(name, []))
                    added[key] = KeyUses([], states, spec)
                found.keys.setdefault(key, None)
                chosen.setdefault(chunk, {})[f"{shader}/{pass_name}"] = key.text
        release_uses(uses)  # what looking its keys up and reading their states made
        if added:
            found.by_chunk[chunk] = ExtendedKeys(uses, added)
    return chosen


def bindings_by_pass(required: Mapping) -> dict[str, list]:
    """shader/pass -> every (draw, render state, specialization values) of the chunk's keys."""
    out: dict[str, list] = {}
    for key, uses in required.items():
        out.setdefault(f"{key.shader}/{key.pass_name}", []).extend(uses.bindings)
    return out
