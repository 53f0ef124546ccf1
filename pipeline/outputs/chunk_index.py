"""The compact chunk index: a chunk manifest as tables and small integers (output format 5).

A chunk's draws share a handful of keys, render states, vertex layouts, specialization
values and per-pass choices, so the index writes each of those once, in a table sorted
by its canonical JSON, and refers to it by position::

    {"format": 4, "chunk": "forest/c00", "level": "forest", "library": "../shaders.pak",
     "blobs":   [sha256, ...]                 the chunk's blobs in the library, sorted
     "keys":    [[pass, values, stages, draws, [render state], key specialization, targets?]]  by text
     "pipelines": [[key, render state, layout, specialization]]       the chunk's PSO list
     "uses":    [[[pass, key, pipeline or null, fallback pipeline?, axis rows?], ...]]   per-pass choices
     "draws":   [[file, node, mesh, primitive, material, variant, use]]
     "key_passes": [["shader/pass", [feature name, ...]]]   what a key row's values are values of
     "files", "passes": sorted lists; "render_states", "layouts", "specializations",
     "key_specializations": tables sorted by canonical JSON,
     "fallbacks": {"shader/pass": key}, "errors": [{...}], "axis_values"?: runtime axes (outputs/axis_table.py)}

A key row names its shader, pass and feature names by position in ``key_passes`` and
lists its values in that order: its text is ``shader/pass{NAME=value,...}`` (bools as
0/1) and its hash follows from them, so no key text is written.  A key whose text
does not split back into names and values (a string value holding ``,`` or ``=``)
carries its text and a ``{name: value}`` object instead.  A pipeline
state's id is the SHA-256 of its canonical JSON (:func:`pipeline.outputs.contract.pipeline_state`),
computed by the reader rather than stored.  :func:`encode` and :func:`decode` turn a
:class:`~pipeline.outputs.manifest.ChunkManifest` into that document and back;
``decode(encode(m))`` gives ``m`` again (its ``reflection``, which lives in the shader
library, aside).  docs/formats.md describes every field.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pipeline.digest import canonical_bytes, sorted_unique, stable_hash
from pipeline.keys.key import KEY_TEXT
from pipeline.keys.required import DRAW_FIELDS
from pipeline.outputs.axis_table import axis_values, decode_rows, encode_rows
from pipeline.rules.emit import format_value

TABLES = ("files", "passes", "render_states", "layouts", "specializations", "key_specializations", "uses",
          "key_passes")


class _Tables:
    """Distinct values per table, each sorted by its canonical bytes when the document is made."""

    def __init__(self) -> None:
        self.items: dict[str, dict[bytes, Any]] = {name: {} for name in TABLES}
        self._at: dict[str, dict[bytes, int]] = {}

    def add(self, table: str, value: Any) -> bytes:
        return self.add_raw(table, canonical_bytes(value), value)

    def add_raw(self, table: str, raw: bytes, value: Any) -> bytes:
        self.items[table].setdefault(raw, value)
        return raw

    def freeze(self) -> None:
        self._at = {name: {raw: i for i, raw in enumerate(sorted(values))} for name, values in self.items.items()}

    def at(self, table: str, raw: bytes) -> int:
        return self._at[table][raw]

    def lists(self) -> dict[str, list]:
        return {name: [values[raw] for raw in sorted(values)] for name, values in self.items.items()}


def feature_names(text: str) -> list[str] | None:
    """The feature names of a key's canonical text, in order (None when it does not parse)."""
    match = KEY_TEXT.match(text)
    if match is None:
        return None
    inner = match["features"]
    return [part.split("=", 1)[0] for part in inner.split(",")] if inner else []


def key_text(pass_label: str, names: list[str], values: list) -> str:
    """A key's canonical text from its ``shader/pass``, feature names and values."""
    return pass_label + "{" + ",".join(f"{n}={format_value(v)}" for n, v in zip(names, values)) + "}"


_SPLITS: dict[str, tuple] = {}  # key text -> (shader, pass, features, their types, split, bytes, object)
_SPLITS_MAX = 1 << 16


def _splits(text: str, e) -> tuple[list, bytes] | None:
    """([shader/pass, names], its canonical bytes) when the key's text is exactly what its names and values
    give, else None; found once per key text and features (the chunks of a cook repeat their keys)."""
    found = _SPLITS.get(text)
    if found is not None and found[6] is e.features and found[0] == e.shader and found[1] == e.pass_name:
        return None if found[4] is None else ([found[4][0], list(found[4][1])], found[5])  # one key object's
    items, types = tuple(e.features.items()), tuple(map(type, e.features.values()))
    if found is None or found[:4] != (e.shader, e.pass_name, items, types):
        names, label, split = feature_names(text), f"{e.shader}/{e.pass_name}", None
        if names is not None and names == [n for n, _ in items] and key_text(label, names, [v for _, v in items]) == text:
            split = (label, tuple(names))
        if len(_SPLITS) >= _SPLITS_MAX:
            _SPLITS.clear()
        found = (e.shader, e.pass_name, items, types, split, None if split is None else canonical_bytes(split))
    _SPLITS[text] = (*found[:6], e.features)  # held: that object's features are these (nobody changes them)
    return None if found[4] is None else ([found[4][0], list(found[4][1])], found[5])


def stage_hashes(m) -> frozenset[str]:
    """Every stage blob hash a chunk (or level) manifest names: what the library must hold for it."""
    return frozenset(h for e in m.keys.values()
                     for stages in (e.stages, *(e.targets or {}).values()) for h in stages.values())


def _shared_passes(draws) -> dict[int, Mapping]:
    """Each distinct ``passes`` object of the draws by its ``id`` (a chunk's draws share a few: each is
    encoded once; the draws keep them alive while the index is made)."""
    found: dict[int, Mapping] = {}
    for d in draws:
        found.setdefault(id(d["passes"]), d["passes"])
    return found


def encode(m, library: str, *, remember: bool = True) -> dict:
    """The compact document of chunk manifest ``m``; ``library``: the shader library's path from the index's folder.
    ``remember``: keep its key rows for :func:`decode` (a chunk index: the one it replaces and its level are
    read next)."""
    blobs = sorted(stage_hashes(m))
    blob_at = {digest: i for i, digest in enumerate(blobs)}
    texts = sorted(m.keys)
    key_at = {text: i for i, text in enumerate(texts)}
    ids = sorted(m.pipelines)
    pipeline_at = {pid: i for i, pid in enumerate(ids)}
    files = sorted({d["file"] for d in m.draws})
    file_at = {f: i for i, f in enumerate(files)}
    shared = _shared_passes(m.draws)
    passes = sorted({name for one in shared.values() for name in one})
    pass_at = {name: i for i, name in enumerate(passes)}
    memo: dict[int, tuple[Any, bytes]] = {}  # the states of a chunk share their layouts and render states

    def canon(value: Any) -> bytes:
        found = memo.get(id(value))
        if found is None or found[0] is not value:
            found = memo[id(value)] = (value, canonical_bytes(value))
        return found[1]

    t = _Tables()
    split = {text: _splits(text, e) for text, e in m.keys.items()}
    spec_raw: dict[int, tuple] = {}  # the entries of a chunk mostly share their specialization objects
    key_specs = {}
    for text, e in m.keys.items():
        found = spec_raw.get(id(e.specialization))
        if found is None or found[0] is not e.specialization:
            found = spec_raw[id(e.specialization)] = (e.specialization, t.add(
                "key_specializations", {k: v.to_json() for k, v in e.specialization.items()}))
        key_specs[text] = found[1]
    for text, e in m.keys.items():
        if split[text] is not None:
            t.add_raw("key_passes", split[text][1], split[text][0])
        for state in e.render_states:
            t.add_raw("render_states", canon(state), dict(state))
    for p in m.pipelines.values():
        t.add_raw("render_states", canon(p["render_state"]), p["render_state"])
        t.add_raw("layouts", canon(p["vertex_layout"]), p["vertex_layout"])
        t.add_raw("specializations", canon(p["specialization"]), p["specialization"])
    (combos, combo_at), use_raw = axis_values(m.draws), {}
    for ident, one in shared.items():  # the draws sharing one passes object share its row
        row = []
        for name, use in sorted(one.items()):
            choice = [pass_at[name], key_at[use["key"]], pipeline_at.get(use.get("pipeline"))]
            if "fallback" in use or "axes" in use:
                choice.append(pipeline_at[use["fallback"]] if "fallback" in use else None)
            if "axes" in use:
                choice.append(encode_rows(use, combo_at, key_at, pipeline_at))
            row.append(choice)
        use_raw[ident] = t.add("uses", row)
    t.freeze()
    keys = []
    if remember:
        _remember_keys(m.keys, split)
    for text in texts:
        e, named = m.keys[text], split[text]
        # a split key's names are its features' own, in order (_split): its values are theirs
        head = [t.at("key_passes", named[1]), list(e.features.values())] \
            if named is not None else [text, dict(e.features)]
        row = [*head, {st: blob_at[h] for st, h in sorted(e.stages.items())}, e.draws,
               sorted({t.at("render_states", canon(state)) for state in e.render_states}),
               t.at("key_specializations", key_specs[text])]
        if e.targets is not None:
            row.append({label: {st: blob_at[h] for st, h in sorted(x.items())} for label, x in sorted(e.targets.items())})
        keys.append(row)
    pipelines = [[key_at[p["key"]], t.at("render_states", canon(p["render_state"])),
                  t.at("layouts", canon(p["vertex_layout"])), t.at("specializations", canon(p["specialization"]))]
                 for pid in ids for p in (m.pipelines[pid],)]
    use_at = {ident: t.at("uses", raw) for ident, raw in use_raw.items()}
    fields = operator.itemgetter(*DRAW_FIELDS[1:])
    draws = [[file_at[d["file"]], *fields(d), use_at[id(d["passes"])]] for d in m.draws]
    return {"chunk": m.chunk, "level": m.level, "library": library, "blobs": blobs, "keys": keys,
            "pipelines": pipelines, "draws": draws, **t.lists(), "files": files, "passes": passes,
            "fallbacks": {p: key_at[text] for p, text in m.fallbacks.items()},
            "errors": sorted_unique(dict(e) for e in m.errors), **({"axis_values": combos} if combos else {})}


def decode(doc: dict, where, entry: Callable[..., Any]) -> dict:
    """The fields of a :class:`~pipeline.outputs.manifest.ChunkManifest` from its compact document.

    ``where`` locates errors (a JSON pointer into the file); ``entry(**fields)`` makes one
    :class:`~pipeline.outputs.manifest.ManifestEntry`.  Any index outside its table, or a row
    of the wrong shape, is a located error."""
    blobs = where.get(doc, "blobs", list)
    tables = {name: where.get(doc, name, list) for name in TABLES}
    for name in ("files", "passes"):
        for i, item in enumerate(tables[name]):
            if not isinstance(item, str):
                raise where.at(name, str(i)).error(f"expected a string, got {type(item).__name__}")
    for i, spec in enumerate(tables["key_specializations"]):
        if not (isinstance(spec, dict) and all(
                isinstance(v, dict) and isinstance(v.get("constant_id"), int) and isinstance(v.get("values"), list)
                for v in spec.values())):
            raise where.at("key_specializations", str(i)).error("expected {feature: {constant_id, values}}")
    where = _Lazy(where)

    texts, keys, checked = [], {}, set()  # checked: ids of the key_passes entries found well formed
    for n, row in enumerate(where.get(doc, "keys", list)):
        at = where.at("keys", n)
        if not (isinstance(row, list) and len(row) in (6, 7) and isinstance(row[1], (list, dict))
                and isinstance(row[2], dict) and isinstance(row[3], int) and isinstance(row[4], list)):
            raise at.error("expected [pass, values, stages, draws, render states, specialization, targets?]")
        if isinstance(row[0], str) and isinstance(row[1], dict):  # a text that does not split back
            text, features = row[0], row[1]
            shader, pass_name, digest = _named(text, features, at)
        else:
            label, names = _key_pass(_pick(tables["key_passes"], row[0], at, "0"), at.at("0"), checked)
            if not isinstance(row[1], list) or len(row[1]) != len(names):
                raise at.at("1").error(f"expected {len(names)} feature values")
            features = dict(zip(names, row[1]))
            try:
                memo = _key_memo(label, names, row[1])
                text, shader, pass_name, digest = _KEYS[memo]
            except (KeyError, TypeError):  # not made yet (or a value that cannot be a memo key)
                text = key_text(label, names, row[1])
                shader, pass_name, digest = _named(text, features, at)
                if len(_KEYS) >= _KEYS_MAX:
                    _KEYS.clear()
                try:
                    _KEYS[memo] = (text, shader, pass_name, digest)
                except TypeError:
                    pass
        stages = {s: _pick(blobs, i, at, "2", s) for s, i in row[2].items()}
        targets = None
        if len(row) == 7:
            if not isinstance(row[6], dict) or not all(isinstance(v, dict) for v in row[6].values()):
                raise at.at("6").error("expected {target: {stage: blob}}")
            targets = {label: {s: _pick(blobs, i, at, "6", label, s) for s, i in st.items()}
                       for label, st in row[6].items()}
        texts.append(text)
        keys[text] = entry(key=text, hash=digest, shader=shader, pass_name=pass_name, features=features, stages=stages,
                           draws=row[3], render_states=tuple(_pick(tables["render_states"], i, at, "4")
                                                             for i in row[4]),
                           specialization=_pick(tables["key_specializations"], row[5], at, "5"), targets=targets)
    pipelines, ids = {}, []
    for n, row in enumerate(where.get(doc, "pipelines", list)):
        at = where.at("pipelines", n)
        if not (isinstance(row, list) and len(row) == 4):
            raise at.error("expected [key, render state, layout, specialization]")
        state = {"key": _pick(texts, row[0], at, "0"), "vertex_layout": _pick(tables["layouts"], row[2], at, "2"),
                 "render_state": _pick(tables["render_states"], row[1], at, "1"),
                 "specialization": _pick(tables["specializations"], row[3], at, "3")}
        pid = stable_hash(state)
        pipelines[pid] = state
        ids.append(pid)
    uses, combos = [], where.get(doc, "axis_values", list) if "axis_values" in doc else []
    for n, row in enumerate(tables["uses"]):
        at = where.at("uses", n)
        one = {}
        for use in row if isinstance(row, list) else [None]:
            if not (isinstance(use, list) and 3 <= len(use) <= 5):
                raise at.error("expected [pass, key, pipeline, fallback?, axes?] per pass")
            choice = {"key": _pick(texts, use[1], at)} | ({"pipeline": _pick(ids, use[2], at)} if use[2] is not None else {})
            if len(use) >= 4 and use[3] is not None:
                choice["fallback"] = _pick(ids, use[3], at)
            if len(use) == 5:
                choice["axes"] = decode_rows(use[4], combos, texts, ids, _pick, at)
            one[_pick(tables["passes"], use[0], at)] = choice
        uses.append(one)
    draws = []
    for n, row in enumerate(where.get(doc, "draws", list)):
        at = where.at("draws", n)
        if not (isinstance(row, list) and len(row) == len(DRAW_FIELDS) + 1):
            raise at.error(f"expected [{', '.join(DRAW_FIELDS)}, use]")
        record = dict(zip(DRAW_FIELDS, [_pick(tables["files"], row[0], at, "0"), *row[1:-1]]))
        record["passes"] = {name: dict(choice) for name, choice in _pick(uses, row[-1], at, len(row) - 1).items()}
        draws.append(record)
    fallbacks = {p: _pick(texts, i, where, "fallbacks", p) for p, i in where.get(doc, "fallbacks", dict).items()}
    return {"keys": keys, "draws": tuple(draws), "pipelines": pipelines, "fallbacks": fallbacks,
            "errors": tuple(where.get(doc, "errors", list))}


class _Lazy:
    """A ``where`` whose JSON pointer is built only when an error needs it (decoding makes one per row)."""

    __slots__ = ("where", "parts")

    def __init__(self, where, parts: tuple = ()) -> None:
        self.where, self.parts = where, parts

    def at(self, *parts: str) -> "_Lazy":
        return _Lazy(self.where, self.parts + parts)

    def get(self, doc: Mapping, name: str, kind: type) -> Any:
        return self.where.at(*map(str, self.parts)).get(doc, name, kind)

    def error(self, message: str) -> Exception:
        return self.where.at(*map(str, self.parts)).error(message)


def _pick(table: list, i: Any, at, *parts: str) -> Any:
    """``table[i]``; a located error (at ``at`` plus ``parts``, built only then) when ``i`` is not a position in it."""
    if type(i) is not int or not 0 <= i < len(table):
        raise at.at(*parts).error(f"index {i!r} is outside its table of {len(table)}")
    return table[i]


# key rows repeat across the chunk indexes of a folder: their text and hash are made once per process
_KEYS: dict[tuple, tuple[str, str, str, str]] = {}
_KEYS_MAX = 1 << 16


def _key_memo(label: str, names: Iterable[str], values: Iterable[Any]) -> tuple:
    """A key row's entry in :data:`_KEYS`: its pass, names and values, each value with its type (True and 1
    print alike but are other keys).  Not hashed here: a value that cannot be is a TypeError where it is used."""
    return label, tuple(names), tuple((type(v), v) for v in values)


def _remember_keys(entries: Mapping[str, Any], split: Mapping[str, Any]) -> None:
    """The key rows an index is written with, remembered as :func:`decode` would make them: the index
    it replaces, and the level manifest holding these keys, then decode them without hashing again."""
    if len(_KEYS) + len(entries) >= _KEYS_MAX:
        _KEYS.clear()
    for text, e in entries.items():
        named = split[text]
        if named is not None:
            try:
                _KEYS[_key_memo(named[0][0], named[0][1], e.features.values())] = (text, e.shader, e.pass_name, e.hash)
            except TypeError:  # a value that cannot be a memo key
                pass


def _named(text: str, features: Mapping[str, Any], at) -> tuple[str, str, str]:
    """(shader, pass, hash) of a key's text and features; a located error when the text is not a key's."""
    match = KEY_TEXT.match(text)
    if match is None:
        raise at.at("0").error(f"not a key text: {text[:80]!r}")
    return match["shader"], match["pass"], stable_hash({"shader": match["shader"], "pass": match["pass"],
                                                        "features": dict(features)})


def _key_pass(item: Any, at, checked: set[int]) -> tuple[str, list[str]]:
    """``[shader/pass, [names]]`` of a key row, each ``key_passes`` entry checked once (its rows share it)."""
    if id(item) in checked:
        return item[0], item[1]
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], list)
            and all(isinstance(n, str) for n in item[1])):
        raise at.error("expected [shader/pass, [feature name, ...]]")
    checked.add(id(item))  # the table holds it (and its id) while the rows are decoded
    return item[0], item[1]


def key_hashes(doc: Mapping) -> dict[str, str] | None:
    """Key text -> key hash of a compact chunk document (None when it is not one); its key rows alone are
    decoded (its draws, uses and pipeline states, a chunk's bulk, are left unread)."""
    if not isinstance(doc, Mapping):
        return None
    try:
        fields = decode({**doc, "draws": [], "uses": [], "pipelines": [], "axis_values": []}, _Lenient(),
                        lambda **f: f["hash"])
    except _Bad:
        return None
    return dict(fields["keys"])


class _Bad(Exception):
    pass


class _Lenient:
    """A ``where`` for :func:`decode` that raises :class:`_Bad` instead of a located error."""

    def at(self, *parts: str) -> "_Lenient":
        return self

    def get(self, doc: Mapping, name: str, kind: type) -> Any:
        value = doc.get(name)
        if not isinstance(value, kind):
            raise _Bad(name)
        return value

    def error(self, message: str) -> Exception:
        return _Bad(message)
