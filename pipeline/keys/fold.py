"""Folding logged misses into a cook: keys no draw of the content requires, cooked because a runtime asked.

A cook given miss logs or key lists (``pipeline cook --include-log FILE``, or every
``*.jsonl``/``*.json`` of ``pipeline.toml``'s ``include_logs`` folder; formats in
:mod:`pipeline.keys.logs`) adds, at the same point as the fallback keys (cook input ->
plan), each key they name that the rule set accepts:

- a miss with ``axes`` (a runtime axis combination the draw's table lacked): the pass's
  logged key with those axis values, normalized by the pass's rules; it is added to
  the draw's axes table (same render state and specialization values as the draw's
  other keys of the pass), so the next run finds it;
- a miss or a key list entry naming a key: that key, when it parses against the rule
  sets and normalize leaves it as it is (else it is a key the rules never cook: a
  located rejection); it is added to the named chunk, or to every chunk of the cook
  drawing its family.

A key the cook input already has for that draw (or chunk) is not folded again.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Iterable, Mapping

import msgspec

from pipeline.errors import Diagnostic, Location, PipelineError
from pipeline.keys.key import PermutationKey
from pipeline.keys.logs import DRAW_FIELDS, read_entries
from pipeline.keys.required import AXES, KeyUses, draw_id
from pipeline.rules.axes import axes_of, key_features
from pipeline.rules.compiled import default_value, in_domain
from pipeline.rules.normalize import run_normalize


class Folded(msgspec.Struct, frozen=True):
    """One key a log added: where (``log:line``), to which chunk, for which draw and axis values."""

    key: str
    chunk: str
    source: str
    draw: tuple | None = None
    axes: tuple = ()

    def to_json(self) -> dict:
        return {"key": self.key, "chunk": self.chunk, "source": self.source,
                "draw": dict(zip(DRAW_FIELDS, self.draw)) if self.draw else None, "axes": dict(self.axes)}


class FoldResult(msgspec.Struct):
    folded: list[Folded]
    rejected: list[Diagnostic]  # located at the log's line: not a key the rules cook

    def keys(self) -> dict[str, list[Folded]]:
        out: dict[str, list[Folded]] = {}
        for f in self.folded:
            out.setdefault(f.key, []).append(f)
        return out


def log_files(given: Iterable[Path | str], folder: Path | None) -> list[Path]:
    """The logs given, then the ``*.jsonl`` and ``*.json`` files of ``folder`` (sorted)."""
    files = [Path(p) for p in given]
    if folder is not None and Path(folder).is_dir():
        files += sorted(p for p in Path(folder).iterdir() if p.suffix in (".jsonl", ".json") and p.is_file())
    return files


def fold(found, families: Mapping, logs: Iterable[Path | str], root: Path | None = None) -> FoldResult:
    """Add the valid keys the logs name to ``found`` (a :class:`~pipeline.keys.incremental.CookInput`,
    changed in place, as :func:`pipeline.outputs.contract.add_fallbacks` changes it); a log inside
    ``root`` (the world's) is named from it."""
    result = FoldResult([], [])
    for path in logs:
        shown = str(path)
        if root is not None and Path(path).is_absolute() and Path(path).is_relative_to(root):
            shown = Path(path).relative_to(root).as_posix()
        for line, record in read_entries(path):
            where = Location(shown, line)
            if isinstance(record, str):
                result.rejected.append(Diagnostic(where, record, "warning"))
                continue
            try:
                _fold_one(found, families, record, f"{shown}:{line}", result)
            except PipelineError as exc:
                message = exc.diagnostics[0].message if exc.diagnostics else str(exc)
                result.rejected.append(Diagnostic(where, message, "warning"))
    return result


def _fold_one(found, families: Mapping, record: dict, source: str, result: FoldResult) -> None:
    if not record.get("key"):
        return  # a draw the cook never saw: nothing names a key to cook
    key = PermutationKey.parse(record["key"], families.values())
    rs = families[key.shader]
    axes = record.get("axes") or {}
    if axes:
        key = with_axes(rs, key, axes)
    else:
        check_cooked_form(rs, key)
    chunk, draw = record.get("chunk"), record.get("draw")
    chunks = [chunk] if chunk else sorted(c for c, uses in found.by_chunk.items()
                                          if any(k.shader == key.shader for k in uses))
    for name in chunks:
        uses = found.by_chunk.get(name)
        if uses is None:
            continue  # a chunk this cook does not cover
        ident = tuple(draw.get(f) for f in DRAW_FIELDS) if isinstance(draw, dict) else None
        if _add(found, name, key, ident, axes):
            result.folded.append(Folded(key.text, name, source, ident, tuple(sorted(axes.items()))))


def with_axes(rs, key: PermutationKey, axes: Mapping) -> PermutationKey:
    """The key of ``key``'s content at the axis values ``axes``: set, then normalized by the pass's rules."""
    pass_ = rs.compiled.passes[key.pass_name]
    runtime = axes_of(rs)
    for name, value in axes.items():
        if name not in runtime:
            raise PipelineError(Diagnostic(Location(key.text), f"'{name}' is not a runtime axis of {rs.shader}"))
        if not in_domain(rs.compiled.domains[name], value):
            raise PipelineError(Diagnostic(Location(key.text), f"{value!r} is not a value of {name}"))
    values = {n: default_value(d) for n, d in rs.compiled.domains.items()} | dict(key.features)
    values |= {n: v for n, v in axes.items() if n in pass_.features}
    normalized, _ = run_normalize(pass_.rules, values)
    return PermutationKey(rs.shader, key.pass_name, key_features(rs, pass_, normalized))


def check_cooked_form(rs, key: PermutationKey) -> None:
    """A key the rules can give: normalize leaves it as it is and its pass does not skip it."""
    pass_ = rs.compiled.passes[key.pass_name]
    values = {n: default_value(d) for n, d in rs.compiled.domains.items()} | dict(key.features)
    normalized, _ = run_normalize(pass_.rules, values)
    made = PermutationKey(rs.shader, key.pass_name, key_features(rs, pass_, normalized))
    if made != key:
        raise PipelineError(Diagnostic(Location(key.text), f"the rules never cook this key: normalize makes it "
                                                           f"{made.text}"))
    if pass_.skip is not None and pass_.skip.run(None, normalized):
        raise PipelineError(Diagnostic(Location(key.text), f"the rules never cook this key: {key.pass_name} "
                                                           f"skips it ({pass_.skip.expr.text})"))


def _add(found, chunk: str, key: PermutationKey, ident: tuple | None, axes: Mapping) -> bool:
    """Add ``key`` to the chunk (for the draw ``ident`` when the chunk draws it); False: already there."""
    uses = found.by_chunk[chunk]
    binding = None
    if ident is not None:
        for k, info in uses.items():
            if (k.shader, k.pass_name) != (key.shader, key.pass_name):
                continue
            for source, state, spec in info.bindings:
                if tuple(draw_id(source)) != ident:
                    continue
                if k == key and (not axes or dict(axes) in spec.get(AXES, ())):
                    return False  # the draw already has it
                binding = binding or (source, state, {n: v for n, v in spec.items() if n != AXES})
    if binding is None and key in uses:
        return False
    found.by_chunk[chunk] = uses = dict(uses)
    found.keys = dict(found.keys)
    info = uses[key] = _copy(uses.get(key))
    found.keys.setdefault(key, None)
    if binding is not None:
        source, state, spec = binding
        spec = spec | ({AXES: [dict(axes)]} if axes else {})
        info.draws.append(source)
        info.bindings.append((source, state, spec))
        if state not in info.render_states:
            info.render_states.append(state)
        for name, value in spec.items():
            if name != AXES and value not in info.specialization.setdefault(name, []):
                info.specialization[name].append(value)
    return True


def _copy(info: KeyUses | None) -> KeyUses:
    if info is None:
        return KeyUses()
    return KeyUses(list(info.draws), list(info.render_states), {n: list(v) for n, v in info.specialization.items()},
                   info.trace, list(info.bindings))


def fold_world(world, found, given: Iterable[Path | str]) -> FoldResult:
    """:func:`fold` of the logs given and those of the world's ``include_logs`` folder (pipeline.toml)."""
    folder = world.config.include_logs
    return fold(found, world.families, log_files(given, world.root / folder if folder is not None else None),
                world.root)


def fold_keys(world, found) -> tuple[FoldResult, dict]:
    """What the world's ``include_logs`` folder folds into the keys ``found`` (a
    :class:`~pipeline.keys.required.KeysResult`, not changed): the fold, and each folded key's uses over
    its chunks (what ``pipeline report`` lists and ``pipeline explain`` explains)."""
    if world.config.include_logs is None:
        return FoldResult([], []), {}
    view = SimpleNamespace(keys=dict(found.required.keys), by_chunk={c: dict(r.keys) for c, r in found.by_chunk.items()})
    result = fold_world(world, view, ())
    named = set(result.keys())
    uses: dict = {}
    for chunk_uses in view.by_chunk.values():
        for key, info in chunk_uses.items():
            if key.text in named:
                uses.setdefault(key, KeyUses()).merge(info)
    return result, uses
