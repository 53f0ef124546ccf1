"""Rendering a report document (``Report.to_json()``) as a text table, CSV or JSON.

Every renderer reads the JSON document, never the :class:`~pipeline.report.funnel.Report`
object, so a saved ``--format json`` report renders the same way later.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Iterable

import orjson

TOP_ROWS = 15
CSV_COLUMNS = ("table", "name", "shader", "pass", "level", "possible", "valid", "required", "unique",
               "unique_sources", "unique_binaries", "cached", "missing", "failed", "pso", "draws", "files",
               "budget")
FUNNEL = ("possible", "valid", "required", "unique_sources", "unique_binaries", "pso")


def render(doc: dict, fmt: str) -> str:
    """The document in ``fmt``: table, json or csv (html lives in :mod:`pipeline.report.html`)."""
    if fmt == "json":
        return render_json(doc)
    if fmt == "csv":
        return render_csv(doc)
    return render_table(doc)


def render_json(doc: dict) -> str:
    """Sorted keys, 2-space indent, UTF-8.  Integers are exact whatever their size: a count past
    2**64 (64 independent bool features) is written as a JSON integer of all its digits."""
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"
    except orjson.JSONEncodeError:  # orjson stops at 64-bit integers; the standard library has no limit
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------ text
def number(value: Any) -> str:
    """Thousands separators for ints; '-' for None (not known: nothing cooked)."""
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def table(headers: list[str], rows: Iterable[list[Any]]) -> list[str]:
    """Left-aligned first column, right-aligned numbers."""
    cells = [[number(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        first = values[0].ljust(widths[0])
        return "  ".join([first] + [v.rjust(w) for v, w in zip(values[1:], widths[1:])]).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells]


def render_table(doc: dict) -> str:
    out = [_title(doc), ""]
    for section in (_status, _budgets, _since, _funnel, _targets, _generated, _axes, _what_if, _levels, _chunks,
                    _features, _files, _materials):
        lines = section(doc)
        if lines:
            out += lines + [""]
    return "\n".join(out).rstrip() + "\n"


def _axes(doc: dict) -> list[str]:
    """Runtime axes: per family and pass, content keys x the axes' combinations = required keys."""
    rows = doc.get("axes") or []
    if not rows and not doc.get("folded"):
        return []
    lines = ["runtime axes (required keys = content keys x axis multipliers)"]
    for f in doc.get("folded") or []:
        shown = ",".join(f"{n}={_value(v)}" for n, v in sorted(f["axes"].items()))
        lines.append(f"  folded from {f['source']}: {f['key']} in {f['chunk']}" + (f" [{shown}]" if shown else ""))
    for r in rows:
        each = ", ".join(f"{a['axis']} [{'|'.join(_value(v) for v in a['values'])}] x{a['multiplier']:g}"
                         + ("" if a["mode"] == "static" else f" ({a['mode']})") for a in r["axes"])
        lines.append(f"  {r['shader']}/{r['pass']}: {r['content_keys']:,} content keys x{r['multiplier']:g} = "
                     f"{r['required']:,} required; {each}")
    return lines


def _value(value) -> str:
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def _title(doc: dict) -> str:
    scope = doc["scope"]
    where = f"chunk {scope['chunk']}" if scope.get("chunk") else f"level {scope['level']}" if scope.get("level") \
        else "all levels"
    cooked = "compile figures from the cache" if doc["cooked"] else "not cooked: no binary figures"
    return f"pipeline report: {doc['world']} ({where}; {cooked})"


def _status(doc: dict) -> list[str]:
    """What needs action first: budgets over, errors, then the required keys and binary bytes."""
    over = [b for b in doc["budgets"] if b["over"]]
    errors = sum(1 for e in doc["errors"] if e.get("severity") == "error")
    lines = [f"OVER BUDGET: {b['scope']} {b['name']} needs {b['required']:,} keys, budget {b['budget']:,}"
             for b in over]
    if errors:
        lines.append(f"{errors} error{'s' if errors != 1 else ''} in the content (listed on stderr)")
    required = sum(r["required"] for r in doc["totals"])
    total = (doc.get("sizes") or {}).get("total")
    size = f"; {total['blobs']:,} binaries, {total['bytes']:,} bytes ({total['compressed']:,} compressed)" \
        if total else ""
    timed = doc.get("timings")
    time = f"; compile time {timed['seconds']:.2f} s" if timed else ""
    lines.append(f"required keys {required:,}{fallback_note(doc)}{size}{time}")
    prov = doc.get("provenance") or {}
    if prov:
        lines.append(f"{prov.get('tool')} {prov.get('tool_version')}, rules {str(prov.get('rules_hash'))[:12]}, "
                     f"world {(prov.get('git_revision') or 'not in git')[:19]}, {prov.get('timestamp')}")
    return lines


def fallback_note(doc: dict) -> str:
    """`` (+3 fallback)``: the fallback keys a cook adds that no draw requires, as ``pipeline cook`` says it."""
    n = len(doc.get("fallback_keys") or ())
    return f" (+{n:,} fallback)" if n else ""


def _funnel(doc: dict) -> list[str]:
    headers = ["family/pass", "possible", "valid", "required", "sources", "binaries", "cached", "missing", "pso"]
    rows = []
    for r in doc["families"] + doc["totals"]:
        name = f"{r['shader']}/{r['pass']}" if r["pass"] != "*" else f"{r['shader']} (all passes)"
        rows.append([name, r["possible"], r["valid"], r["required"], r["unique_sources"], r["unique_binaries"],
                     r["cached"], r["missing"], r["pso"]])
    return ["Funnel: possible -> valid -> required -> unique sources -> unique binaries"] + table(headers, rows)


def target_table(doc: dict) -> tuple[list[str], list[list]] | None:
    """Headers and rows of the per-target funnel and sizes, when the keys have more than one target or the
    world a target matrix (a single default target repeats the funnel: not shown)."""
    rows = doc.get("targets") or []
    if len({r["target"] for r in rows}) < 2 and not any(r["platforms"] for r in rows):
        return None
    headers = ["target", "family", "platforms", "possible", "valid", "required", "jobs", "binaries", "bytes",
               "compressed", "failed", "status"]
    return headers, [[r["target"], r["family"], ",".join(r["platforms"]) or "-", r["possible"], r["valid"],
                      r["required"], r["jobs"], r["binaries"], r["bytes"], r["compressed"], r["failed"], r["status"]]
                     for r in rows]


def _targets(doc: dict) -> list[str]:
    found = target_table(doc)
    if found is None:
        return []
    return ["Per target: possible -> valid -> required -> jobs, binaries and bytes ('*': all families)"] \
        + table(*found)


def _generated(doc: dict) -> list[str]:
    rows = [[f"{r['shader']}/{r['pass']}", r["kind"], r["materials"], r["graph_shapes"], r["unique_sources"],
             r["unique_binaries"]] for r in doc["families"] if r.get("materials") is not None]
    headers = ["family/pass", "kind", "materials", "graph shapes", "generated sources", "binaries"]
    return ["Generated families: materials -> graph shapes -> generated sources -> binaries"] + table(headers, rows) \
        if rows else []


def _what_if(doc: dict) -> list[str]:
    what = doc.get("what_if")
    if not what:
        return []
    shown = ", ".join(f"{k}={v}" for k, v in what["overrides"].items())
    headers = ["family/pass", "possible", "what-if", "valid", "what-if", "required", "what-if", "change"]
    rows = [[f"{r['shader']}/{r['pass']}", r["today"]["possible"], r["what_if"]["possible"], r["today"]["valid"],
             r["what_if"]["valid"], r["today"]["required"], r["what_if"]["required"],
             _delta(r["what_if"]["required"] - r["today"]["required"])] for r in what["families"]]
    return [f"What if {shown} (today, then what-if)"] + table(headers, rows)


def _delta(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def _levels(doc: dict) -> list[str]:
    headers = ["level", "required", "unique", "draws", "files", "budget"]
    rows = [[r["name"], r["required"], r["unique"], r["draws"], r["files"], r["budget"]] for r in doc["levels"]]
    return ["Levels (unique: keys no other level needs)"] + table(headers, rows) if rows else []


def _chunks(doc: dict) -> list[str]:
    ranked = sorted(doc["chunks"], key=lambda r: (-r["required"], r["name"]))
    headers = ["chunk", "required", "unique", "draws", "files"]
    rows = [[r["name"], r["required"], r["unique"], r["draws"], r["files"]] for r in ranked[:TOP_ROWS]]
    more = len(ranked) - len(rows)
    note = [f"({more} more chunks in --format json/csv/html)"] if more > 0 else []
    return ["Chunks by required keys (unique: keys no other chunk needs)"] + table(headers, rows) + note


def _features(doc: dict) -> list[str]:
    rows = [[feature_label(r), r["values_used"], r["required"], r["if_dynamic"], r["saved"]]
            for r in doc["features"][:TOP_ROWS] if r["saved"] > 0]
    headers = ["feature", "values used", "required", "if dynamic", "saved"]
    return ["Features that multiply the required keys most"] + table(headers, rows) if rows else []


def feature_label(row: dict) -> str:
    """``family.FEATURE`` of a feature row (a report saved before rows carried ``name`` too)."""
    return row.get("name") or f"{row['shader']}.{row['feature']}"


def _files(doc: dict) -> list[str]:
    rows = [[r["file"], r["only_here"], r["keys"], r["draws"]]
            for r in doc["contributors"]["files"][:TOP_ROWS] if r["only_here"] > 0]
    headers = ["file", "keys only it needs", "keys", "draws"]
    return ["Files that add keys nothing else needs"] + table(headers, rows) if rows else []


def _materials(doc: dict) -> list[str]:
    rows = [[f"{r['file']} ({r['material']})", r["only_here"], r["keys"], r["draws"]]
            for r in doc["contributors"]["materials"][:TOP_ROWS] if r["only_here"] > 0]
    headers = ["material", "keys only it needs", "keys", "draws"]
    return ["Materials that add keys nothing else needs"] + table(headers, rows) if rows else []


def _budgets(doc: dict) -> list[str]:
    lines = []
    for b in doc["budgets"]:
        status = b["message"] if b["over"] else f"{b['scope']} {b['name']}: {b['required']} of {b['budget']} keys"
        lines.append(("OVER  " if b["over"] else "ok    ") + status)
    return ["Budgets"] + lines if lines else []


def _since(doc: dict) -> list[str]:
    since = doc.get("since")
    if not since:
        return []
    lines = [f"Since {since['old']}: {len(since['added'])} keys added, {len(since['removed'])} removed"]
    totals = since.get("totals") or {}
    if totals:
        states, size = totals["pipeline_states"], totals.get("bytes")
        lines.append(f"  pipeline states +{states['added']:,} -{states['removed']:,}"
                     + (f"; bytes +{size['added']:,} -{size['removed']:,}" if size else ""))
    lines += [f"  + {k['key']}" for k in since["added"]] + [f"  - {k['key']}" for k in since["removed"]]
    if since["files"]:
        lines += [""] + table(["file", "added", "removed"], [[f["file"], f["added"], f["removed"]]
                                                              for f in since["files"]])
    return lines


# ------------------------------------------------------------------ csv
def render_csv(doc: dict) -> str:
    """One flat table: a row per family/pass (funnel), level and chunk; a ``table`` column tells them apart."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in doc["families"] + doc["totals"]:
        writer.writerow({**r, "table": "family", "name": f"{r['shader']}/{r['pass']}"})
    for kind in ("levels", "chunks"):
        for r in doc[kind]:
            writer.writerow({**r, "table": kind[:-1]})
    return buffer.getvalue()
