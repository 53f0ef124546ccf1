"""``pipeline check-log``: is every miss of a runtime miss log covered by the current cook?

For each logged miss (:mod:`pipeline.runtime.misses`) the draw is looked up in the
world's content as it is now (scan + rules, through :func:`pipeline.api.keys`):

- ``stale``: the content requires the logged key for that draw and the cooked outputs do
  not hold it (missing from the chunk index, or its blobs from the shader library): cook again.
- ``cooked``: the content requires it and the outputs now hold it (the log is older than
  the cook).
- ``runtime``: the content does not require that key for that draw: the draw is not in
  the content (made at run time), or the content gives it another key; the result names
  the content's key and, for each feature that differs, the rule that set it.  Covered
  only when some cooked chunk holds the key.

A miss of a runtime axis combination (the record's ``axes``: the draw's axes table had no
row for the values the renderer asked for) is, by the draw's table in the outputs now and
the combinations the content's rules allow (docs/runtime-axes.md):

- ``axis``: the rules allow the combination and the outputs hold its row: covered by an axis;
- ``stale``: the rules allow it and the outputs lack it: cook again;
- ``folded``: the rules (or pipeline.toml ``[axes]``) do not allow it, but a log folded into
  the cook added its row: covered;
- ``uncovered``: neither: fold the log into the next cook (``pipeline cook --include-log``).

A miss that is not covered makes the check fail (exit 1): strict matching, offline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.outputs import manifest as mf
from pipeline.outputs.contract import DRAW_FIELDS
from pipeline.outputs.pak import read_index
from pipeline.errors import Diagnostic, Location, PipelineError
from pipeline.runtime.check import chunk_names
from pipeline.keys.required import AXES
from pipeline.rules.axes import axes_of
from pipeline.runtime.misses import read_log


@dataclass
class MissVerdict:
    line: int
    key: str | None
    chunk: str
    draw: dict
    pass_name: str | None
    status: str                 # stale | cooked | runtime | axis | folded | uncovered
    covered: bool
    reason: str
    content_key: str | None = None
    rules: list[dict] = field(default_factory=list)

    axes: dict | None = None

    def to_json(self) -> dict:
        return {"line": self.line, "key": self.key, "chunk": self.chunk, "draw": self.draw, "pass": self.pass_name,
                "status": self.status, "covered": self.covered, "reason": self.reason,
                "content_key": self.content_key, "rules": self.rules} | ({"axes": self.axes} if self.axes else {})


@dataclass
class CheckLogResult:
    """What :func:`check_log` found: a verdict per miss, and the lines of the log that could not be read."""

    log: str
    misses: list[MissVerdict]
    errors: list[Diagnostic]  # located at the log's line

    @property
    def ok(self) -> bool:
        return not self.errors and all(m.covered for m in self.misses)

    def to_json(self) -> dict:
        return {"log": self.log, "misses": [m.to_json() for m in self.misses],
                "covered": sum(m.covered for m in self.misses),
                "uncovered": sum(not m.covered for m in self.misses),
                "errors": [{"file": e.file, "line": e.line, "message": e.message} for e in self.errors]}


def check_log(world, log: Path | str, out: Path | str, keys_of_chunk) -> CheckLogResult:
    """``keys_of_chunk(chunk)`` gives the chunk's :class:`~pipeline.keys.evaluate.RequiredKeys` now."""
    out = Path(out)
    verdicts, errors = [], []
    content: dict[str, dict] = {}
    cooked: dict[str, set[str]] = {}
    anywhere: dict[str, bool] = {}

    def cooked_anywhere(key: str) -> bool:
        if key not in anywhere:
            anywhere[key] = _cooked_anywhere(out, key)
        return anywhere[key]

    unknown: dict[str, str] = {}  # chunk -> why the world has no keys for it
    for line, record in read_log(log):
        if isinstance(record, str):
            errors.append(Diagnostic(Location(str(log), line), record))
            continue
        chunk = record["chunk"]
        if chunk not in content and chunk not in unknown:
            try:
                content[chunk] = _content_uses(keys_of_chunk(chunk), world.families)
            except PipelineError as exc:  # no such chunk in the world: this line's error, the rest still read
                unknown[chunk] = exc.diagnostics[0].message if exc.diagnostics else str(exc)
            else:
                cooked[chunk] = _cooked_keys(out, chunk)
        if chunk in unknown:
            errors.append(Diagnostic(Location(str(log), line), unknown[chunk]))
            continue
        if record.get("axes"):
            verdicts.append(axis_verdict(line, record, content[chunk], cooked[chunk], rows_of(out, chunk)))
            continue
        verdicts.append(_verdict(line, record, content[chunk], cooked[chunk], cooked_anywhere))
    return CheckLogResult(str(log), verdicts, errors)


def _content_uses(required, families) -> dict[tuple, dict[str, tuple]]:
    """draw id -> shader/pass -> (key, trace) as the content requires now, and under ``(draw id, "axes")``
    shader/pass -> [({axis: value}, key text)] for the passes with runtime axes."""
    uses: dict[tuple, dict] = {}
    for key, info in required.keys.items():
        label = f"{key.shader}/{key.pass_name}"
        for src, _, spec in info.bindings:
            draw = (src.file, src.node, src.mesh, src.primitive, src.material, src.variant)
            combos = (spec or {}).get(AXES)
            if combos:
                rows = uses.setdefault((draw, "axes"), {}).setdefault(label, [])
                rows += [(dict(c), key.text) for c in combos]
                allowed = axes_of(families[key.shader])
                if not any(all(_same_value(allowed[n][0], v) for n, v in c.items()) for c in combos):
                    continue  # the pass's own key is that of its first combination
            uses.setdefault(draw, {})[label] = (key, info.trace)
    return uses


def _same_value(a, b) -> bool:
    return a == b and type(a) is type(b)


def rows_of(out: Path, chunk: str) -> dict[tuple, dict[str, list[dict]]]:
    """draw id -> shader/pass -> the axis rows of the chunk's index whose key is cooked (blobs in the library)."""
    try:
        manifest = mf.load_chunk_manifest(mf.chunk_manifest_path(out, chunk))
    except (mf.ManifestError, OSError):
        return {}
    cooked = _cooked_keys(out, chunk)
    return {tuple(r[f] for f in DRAW_FIELDS): {label: [row for row in use.get("axes", ()) if row["key"] in cooked]
                                               for label, use in r["passes"].items()} for r in manifest.draws}


def axis_verdict(line: int, record: dict, content: dict, cooked: set[str], rows: dict) -> MissVerdict:
    """The verdict of a miss of a runtime axis combination (see the module's doc)."""
    draw, label, axes = record["draw"], record.get("pass"), dict(record["axes"])
    draw_id = tuple(draw.get(f) for f in DRAW_FIELDS)
    base = dict(line=line, key=record["key"], chunk=record["chunk"], draw=draw, pass_name=label, axes=axes)
    allowed = [key for values, key in content.get((draw_id, "axes"), {}).get(label, []) if _same(values, axes)]
    held = [row["key"] for row in rows.get(draw_id, {}).get(label, []) if _same(row["values"], axes)]
    shown = ", ".join(f"{n}={int(v) if isinstance(v, bool) else v}" for n, v in sorted(axes.items()))
    if allowed and held:
        return MissVerdict(**base, status="axis", covered=True, content_key=allowed[0],
                           reason=f"covered by an axis: the cook holds {shown} for this draw now")
    if allowed:
        return MissVerdict(**base, status="stale", covered=False, content_key=allowed[0],
                           reason=f"the rules allow {shown} but the cooked chunk lacks its row: cook again")
    if held:
        return MissVerdict(**base, status="folded", covered=True, content_key=held[0],
                           reason=f"folded from a log: the rules do not cook {shown} for this draw, a log did")
    return MissVerdict(**base, status="uncovered", covered=False,
                       reason=f"the rules (or pipeline.toml [axes]) do not cook {shown} for this draw: fold this "
                              "log into the next cook (pipeline cook --include-log)")


def _same(values: dict, wanted: dict) -> bool:
    return all(values.get(n) == v and type(values.get(n)) is type(v) for n, v in wanted.items())


def _cooked_keys(out: Path, chunk: str) -> set[str]:
    """Keys of the chunk's index whose every stage blob is in the shader library."""
    try:
        manifest = mf.load_chunk_manifest(mf.chunk_manifest_path(out, chunk))
        present = (read_index(mf.library_path(out)) or (frozenset(), {}))[0]
    except (mf.ManifestError, OSError, ValueError):
        return set()
    return {k for k, e in manifest.keys.items() if e.stages and set(e.stages.values()) <= present}


def _cooked_anywhere(out: Path, key: str) -> bool:
    return any(key in _cooked_keys(out, chunk) for chunk in chunk_names(out))


def _verdict(line: int, record: dict, content: dict, cooked: set[str], anywhere) -> MissVerdict:
    draw = record["draw"]
    draw_id = tuple(draw.get(f) for f in DRAW_FIELDS)
    key, label = record["key"], record.get("pass")
    base = dict(line=line, key=key, chunk=record["chunk"], draw=draw, pass_name=label)
    now = content.get(draw_id, {}).get(label) if label else None
    if now is not None and key == now[0].text:
        if key in cooked:
            return MissVerdict(**base, status="cooked", covered=True, content_key=key,
                               reason="the content requires this key and the current cook holds it")
        return MissVerdict(**base, status="stale", covered=False, content_key=key,
                           reason="the content requires this key but the cooked chunk lacks it: cook again")
    covered = key is not None and anywhere(key)
    if draw_id not in content:
        reason = "the draw is not in the content: made at run time"
        return MissVerdict(**base, status="runtime", covered=covered, reason=reason)
    if now is None:
        return MissVerdict(**base, status="runtime", covered=covered,
                           reason=f"no rule set gives this draw a key for {label}: a runtime path asked for it")
    return MissVerdict(**base, status="runtime", covered=covered, content_key=now[0].text,
                       reason="the content gives this draw another key: a runtime change (material or mesh) "
                              "made this one", rules=_differences(key, now))


def _differences(key: str | None, now: tuple) -> list[dict]:
    """For each feature whose value differs from the content's key: the rule that set the content's value."""
    content_key, trace = now
    logged = _features(key)
    out = []
    for name, value in content_key.features:
        shown = "1" if value is True else "0" if value is False else str(value)
        if logged.get(name) not in (None, shown):
            where = trace.features.get(name) if trace else None
            out.append({"feature": name, "logged": logged.get(name), "content": shown,
                        "rule": where.location if where else None,
                        "expression": where.expression if where else None})
    return out


def _features(key: str | None) -> dict[str, str]:
    if not key or "{" not in key:
        return {}
    body = key[key.index("{") + 1:key.rindex("}")]
    return dict(item.split("=", 1) for item in body.split(",") if "=" in item)
