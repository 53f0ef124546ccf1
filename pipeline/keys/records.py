"""Key records: what the incremental cook keeps per chunk and per rule evaluation.

``chunk-keys:<fingerprint>`` (version 7), one per chunk state (see
:mod:`pipeline.keys.incremental` for what the fingerprint covers): what a cook merges.  A key is
named by its hash alone, its definition being a ``key`` record (below): the chunks of a world
share a few hundred keys, and a cook reading every chunk's record decodes each key once.  A
key's render states and specialization values are positions in the record's tables, each entry
the value's canonical JSON text (:func:`pipeline.digest.canonical_bytes`), so a cook reading many
chunks decodes each distinct value once and holds it once; its render states are one list of
``state_lists``, which its keys share.  The keys are columns, one list per field in the keys'
order, so a cook that reads every chunk's record (a whole-world cook after an edit) makes a
chunk's lists in a few C calls, with no Python step per key::

    {"name": "forest/c03", "level": "forest" | null, "draws": 12,
     "keys": [key hash, ...], "key_draws": [draws, ...], "key_states": [state list position, ...],
     "key_specializations": [specialization position, ...],
     "state_lists": [[render state position, ...], ...],
     "render_states": ["{...}", ...], "specializations": ["{\"feature\":[values]}", ...],
     "scan_diagnostics": [diagnostic, ...], "rule_diagnostics": [diagnostic, ...],
     "deps": [[path, mtime_ns, size, inode, ctime_ns], ...] | null}

``key:<key hash>`` (version 1): a key's definition, written with the first chunk record naming it::

    [shader, pass, [[feature, value], ...], key text]

``chunk-draws:<fingerprint>`` (version 3), beside it: each key's draws, in the order of
the ``keys`` above, read only by whatever writes the chunk's outputs.  Each draw is listed
once (a draw has a binding per pass and axis key); a binding names its draw, render state and
specialization values by their positions in the record's tables (the draws of a material
share the last two, so each is stored and decoded once), three numbers per binding, one flat
list per key::

    {"keys": [key hash, ...], "draws": [[file, node, mesh, primitive, material, variant], ...],
     "bindings": [[draw, render state, specialization, draw, ...], ...],
     "render_states": [{...}, ...], "specializations": [{feature: value}, ...]}

``evaluations:<hash of rules, config, code and projected facts>`` (version 3): the
keys one distinct projected fact combination needs (rule errors are not stored).  A use's
rule trace, most of the record, is kept as the JSON text of itself: a cook reads the record
without decoding it, and whatever reads the trace (``pipeline explain``) decodes it then
(:class:`StoredTrace`)::

    [{"key": [shader, pass, [[feature, value], ...]], "render_state": {...},
      "specialization": {feature: [constant_id, value]}, "dynamic": {feature: value},
      "axes": [{axis: value}, ...],
      "trace": "{\"features\": {name: [value, rule, case, expression, [fact paths]]},
                 \"normalize\": [[rule, pass, when, [[feature, value], ...]], ...]}"}, ...]

A diagnostic is :meth:`pipeline.errors.Diagnostic.to_json`.  Anything that does not
decode is a miss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from pipeline.cache.store import RecordKind, Store
from pipeline.keys.evaluate import FeatureTrace, KeyUse, NormalizeTrace, Trace
from pipeline.keys.key import PermutationKey, interned

CHUNK_KEYS = RecordKind("chunk-keys", 7)  # 3: file stamps; 4: bindings in chunk-draws; 5: value tables; 6: keys by hash;
# 7: keys as columns
KEY_DEFS = RecordKind("key", 1)
CHUNK_DRAWS = RecordKind("chunk-draws", 3)  # 2: render states and specialization values in tables; 3: draws once
EVALUATIONS = RecordKind("evaluations", 3)  # 2: runtime axis combinations; 3: the trace as JSON text


def features_of(pairs) -> tuple:
    """``[[name, value], ...]`` back into the key's hashable feature tuple."""
    return tuple((str(name), value) for name, value in pairs)


def encode_uses(uses: list[KeyUse]) -> list[dict]:
    return [{"key": [u.key.shader, u.key.pass_name, u.key.features], "render_state": u.render_state,
             "specialization": u.specialization, "dynamic": u.dynamic, "axes": list(u.axes),
             "trace": trace_text(u.trace)}
            for u in uses]


def trace_text(trace: Trace) -> str:
    """A trace as an evaluation record keeps it (a stored one not decoded yet: its text as read)."""
    if isinstance(trace, StoredTrace) and trace._made is None:
        return trace._text
    return orjson.dumps({"features": {n: [t.value, t.location, t.case, t.expression, t.facts]
                                      for n, t in trace.features.items()},
                         "normalize": [[n.location, n.pass_name, n.when, n.set] for n in trace.normalize]}).decode()


def decode_uses(data: list[dict]) -> list[KeyUse]:
    """Raises KeyError/TypeError/ValueError on anything that is not a record of this layout (a trace's
    text is decoded when the trace is first read, raising ValueError then)."""
    uses = []
    for u in data:
        shader, pass_name, features = u["key"]
        if not isinstance(u["trace"], str):
            raise TypeError("a trace that is not JSON text")
        uses.append(KeyUse(interned(PermutationKey(shader, pass_name, features_of(features))), dict(u["render_state"]),
                           {n: tuple(v) for n, v in u["specialization"].items()}, dict(u["dynamic"]),
                           StoredTrace(u["trace"]), tuple(dict(c) for c in u["axes"])))
    return uses


class StoredTrace(Trace):
    """A :class:`~pipeline.keys.evaluate.Trace` read back from an evaluation record, decoded from its text
    when first read: a cook carries the traces of its keys and never reads them.  Equal to the trace it
    was made from."""

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_made", None)

    def _trace(self) -> Trace:
        if self._made is None:
            try:
                doc = orjson.loads(self._text)
                made = Trace({n: FeatureTrace(v, loc, case, expr, tuple(facts))
                              for n, (v, loc, case, expr, facts) in doc["features"].items()},
                             tuple(NormalizeTrace(loc, p, when, features_of(s)) for loc, p, when, s in doc["normalize"]))
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"an evaluation record's trace does not decode: {exc}") from None
            object.__setattr__(self, "_made", made)
        return self._made

    features = property(lambda self: self._trace().features)  # type: ignore[assignment]
    normalize = property(lambda self: self._trace().normalize)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return (self.features, self.normalize) == (other.features, other.normalize)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoredTrace({self._trace()!r})"

    def __reduce__(self):
        return (StoredTrace, (self._text,))


def store_definitions(store: Store, chunk, known: set[str]) -> None:
    """Record the ``key`` record of each key of ``chunk`` (a :class:`~pipeline.keys.chunk_keys.ChunkKeys`)
    the store lacks (``known``: hashes already recorded or found, kept by the caller across its chunks)."""
    for digest, definition in chunk.definitions().items():
        if digest not in known:
            known.add(digest)
            if not store.has(KEY_DEFS, digest):
                store.set(KEY_DEFS, digest, definition)


def defining(store: Store) -> Callable[[str], Any]:
    """A key hash -> its definition, from its ``key`` record (None when absent)."""
    return lambda digest: store.get(KEY_DEFS, digest)
