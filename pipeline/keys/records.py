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

``evaluations:<hash of rules, config, code and projected facts>`` (version 4): the
keys one distinct projected fact combination needs (rule errors are not stored).  A use names its
rule trace by the hash of the trace's JSON text, itself a ``trace`` record: the traces were five
sixths of the bytes of an evaluation, a cook reads a chunk's evaluations and never its traces,
and the draws of a world share a few hundred traces.  Whatever reads a trace (``pipeline
check-log``) reads and decodes it then (:class:`StoredTrace`)::

    [{"key": [shader, pass, [[feature, value], ...]], "render_state": {...},
      "specialization": {feature: [constant_id, value]}, "dynamic": {feature: value},
      "axes": [{axis: value}, ...], "trace": trace hash}, ...]

``trace:<SHA-256 of its text>`` (version 1): a rule trace as JSON text::

    "{\"features\": {name: [value, rule, case, expression, [fact paths]]},
      \"normalize\": [[rule, pass, when, [[feature, value], ...]], ...]}"

A diagnostic is :meth:`pipeline.errors.Diagnostic.to_json`.  Anything that does not
decode is a miss.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from pipeline.cache.store import RecordKind, Store
from pipeline.digest import bytes_hash
from pipeline.keys.evaluate import FeatureTrace, KeyUse, NormalizeTrace, Trace
from pipeline.keys.key import PermutationKey, interned

CHUNK_KEYS = RecordKind("chunk-keys", 7)  # 3: file stamps; 4: bindings in chunk-draws; 5: value tables; 6: keys by hash;
# 7: keys as columns
KEY_DEFS = RecordKind("key", 1)
CHUNK_DRAWS = RecordKind("chunk-draws", 3)  # 2: render states and specialization values in tables; 3: draws once
EVALUATIONS = RecordKind("evaluations", 4)  # 2: runtime axis combinations; 3: the trace as JSON text; 4: by hash
TRACES = RecordKind("trace", 1)


def features_of(pairs) -> tuple:
    """``[[name, value], ...]`` back into the key's hashable feature tuple."""
    return tuple((str(name), value) for name, value in pairs)


def encode_uses(uses: list[KeyUse]) -> tuple[list[dict], dict[str, str]]:
    """An evaluation record's data, and the texts of the traces it names, by hash (their ``trace`` records)."""
    records, traces = [], {}
    for u in uses:
        digest, text = trace_record(u.trace)
        traces[digest] = text
        records.append({"key": [u.key.shader, u.key.pass_name, u.key.features], "render_state": u.render_state,
                        "specialization": u.specialization, "dynamic": u.dynamic, "axes": list(u.axes),
                        "trace": digest})
    return records, traces


def trace_record(trace: Trace) -> tuple[str, str]:
    """A trace's hash and JSON text, as its ``trace`` record keeps it (a stored one: as read, not decoded)."""
    if isinstance(trace, StoredTrace):
        return trace._digest, trace.text
    text = orjson.dumps({"features": {n: [t.value, t.location, t.case, t.expression, t.facts]
                                      for n, t in trace.features.items()},
                         "normalize": [[n.location, n.pass_name, n.when, n.set] for n in trace.normalize]}).decode()
    return bytes_hash(text.encode()), text


def decode_uses(data: list[dict], load_trace: Callable[[str], Any], made: dict | None = None) -> list[KeyUse]:
    """An evaluation record's uses, their traces read by ``load_trace(hash)`` (the ``trace`` record's data,
    None when absent) when first read.  ``made``: the keys and traces decoded so far, kept by the caller
    across records: the uses that share a key or a trace get one object (and a trace one read).  Raises
    KeyError/TypeError/ValueError on anything that is not a record of this layout (a trace that is absent
    or does not decode raises ValueError when read)."""
    uses, made = [], {} if made is None else made
    for u in data:
        shader, pass_name, features = u["key"]
        pairs = (shader, pass_name, tuple(map(tuple, features)))
        key = made.get(pairs)
        if key is None:
            key = made[pairs] = interned(PermutationKey(shader, pass_name, features_of(features)))
        digest = u["trace"]
        if not isinstance(digest, str):
            raise TypeError("a trace that is not named by its hash")
        trace = made.get(digest)
        if trace is None:
            trace = made[digest] = StoredTrace(digest, load_trace)
        uses.append(KeyUse(key, dict(u["render_state"]), {n: tuple(v) for n, v in u["specialization"].items()},
                           dict(u["dynamic"]), trace, tuple(dict(c) for c in u["axes"])))
    return uses


class StoredTrace(Trace):
    """A :class:`~pipeline.keys.evaluate.Trace` named by an evaluation record, read from its ``trace`` record
    and decoded when first read: a cook carries the traces of its keys and never reads them.  Equal to
    the trace it was made from.  ``source``: the trace's text, or what reads it by hash."""

    def __init__(self, digest: str, source: str | Callable[[str], Any]) -> None:
        object.__setattr__(self, "_digest", digest)
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_made", None)

    @property
    def text(self) -> str:
        """The trace's JSON text, read (not decoded) when first asked for."""
        if not isinstance(self._source, str):
            text = self._source(self._digest)
            if not isinstance(text, str):
                raise ValueError(f"an evaluation record's trace {self._digest[:16]} is not in the store")
            object.__setattr__(self, "_source", text)
        return self._source

    def _trace(self) -> Trace:
        if self._made is None:
            text = self.text
            try:
                doc = orjson.loads(text)
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
        return (StoredTrace, (self._digest, self.text))


def store_definitions(store: Store, chunk, known: set[str]) -> None:
    """Record the ``key`` record of each key of ``chunk`` (a :class:`~pipeline.keys.chunk_keys.ChunkKeys`)
    the store lacks (``known``: hashes already recorded or found, kept by the caller across its chunks)."""
    store_missing(store, KEY_DEFS, chunk.definitions(), known)


def store_missing(store: Store, kind: RecordKind, records: Mapping[str, Any], known: set[str]) -> None:
    """Record each of ``records`` (content-addressed: hash -> data) the store lacks; ``known``: hashes
    already recorded or found, kept by the caller across its calls (each looked up once)."""
    fresh = [digest for digest in records if digest not in known]
    known.update(fresh)
    stored = store.present(kind, fresh) if fresh else set()  # one query for many, not one each
    for digest in fresh:
        if digest not in stored:
            store.set(kind, digest, records[digest])


def defining(store: Store) -> Callable[[str], Any]:
    """A key hash -> its definition, from its ``key`` record (None when absent)."""
    return lambda digest: store.get(KEY_DEFS, digest)
