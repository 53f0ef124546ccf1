"""The report as one self-contained HTML page: inline CSS, inline JS, charts as inline SVG.

Nothing is fetched from the network.  The page opens with what needs action
(scopes over budget in red, errors, changes since the last report, binary size,
compile time: :mod:`pipeline.report.html_action`), then the figures that explain
them.  Charts: the funnel of every family and pass on a log scale, required keys
per chunk (unique and shared), the keys each static feature would save if it were
dynamic, and with ``--history`` the trend across builds.  Every table sorts by a
click on its header, or on load from the URL fragment
``#sort=TABLE:COLUMN[:asc|desc]``; a filter box narrows every table and
explanation; every key links to its explanation in the page.  Printed, every
table shows all its rows.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from pipeline.report.html_action import (
    path_html,
    Raw,
    action_section,
    explanations_section,
    filter_box,
    history_section,
    key_link,
    mib,
    provenance_line,
    sizes_section,
    targets_section,
    timings_section,
)
from pipeline.report.html_assets import CSS, JS
from pipeline.report.render import feature_label, number

STEPS = (("possible", "possible", "#c7d2fe"), ("valid", "valid", "#818cf8"), ("required", "required", "#4f46e5"),
         ("unique_sources", "unique sources", "#0891b2"), ("unique_binaries", "unique binaries", "#0d9488"),
         ("pso", "pipeline states", "#d97706"))
TOP_CHUNKS = 30
TOP_FEATURES = 15
LABEL_W, CHART_W = 300, 960


def render_html(doc: dict) -> str:
    """The whole page."""
    body = "\n".join([_header(doc), provenance_line(doc), filter_box(), action_section(doc), _cards(doc),
                      _budget_section(doc), _since_section(doc), history_section(doc, _section),
                      sizes_section(doc, _section, table_html), timings_section(doc, _section, table_html),
                      _funnel_section(doc), targets_section(doc, _section, table_html), _axes_section(doc), _what_if_section(doc), _chunk_section(doc), _feature_section(doc),
                      _contributor_section(doc), _keys_section(doc), explanations_section(doc, _section),
                      _errors_section(doc)])
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Permutation report: {escape(doc['world'])}</title><style>{CSS}</style></head>\n"
            f"<body><main>\n{body}\n</main><script>{JS}</script></body></html>\n")


# ------------------------------------------------------------------ page parts
def _header(doc: dict) -> str:
    scope = doc["scope"]
    where = f"chunk {scope['chunk']}" if scope.get("chunk") else f"level {scope['level']}" \
        if scope.get("level") else "all levels"
    cooked = "compile figures from the cache" if doc["cooked"] else "not cooked yet: binary figures unknown"
    compiler = f"<br><span class=\"muted\">compiler: {escape(doc['compiler'])}</span>" if doc.get("compiler") else ""
    return (f"<header><h1>Permutation report</h1><p class=\"sub\"><code>{path_html(doc['world'])}</code> &middot; "
            f"{escape(where)} &middot; {cooked}{compiler}</p></header>")


def _cards(doc: dict) -> str:
    """What the content costs; the size of the possible and valid spaces stays in the funnel table."""
    totals = doc["totals"]
    fallbacks = len(doc.get("fallback_keys") or ())
    used = "used by the content" + (f"; +{fallbacks:,} fallback keys also cooked" if fallbacks else "")
    figures = [("required", "required keys", used),
               ("unique_sources", "compile jobs", "after stage projection"),
               ("unique_binaries", "unique binaries", "distinct SPIR-V blobs"), ("pso", "pipeline states",
                                                                                   "blobs + render state")]
    # a figure not known yet (nothing cooked) has no card: the header says what is not cooked
    cards = [_card(value, label, note, f) for f, label, note in figures if (value := _sum(totals, f)) is not None]
    total = (doc.get("sizes") or {}).get("total")
    if total:
        cards.append(_card_html(mib(total["bytes"]), "binary size", f"{mib(total['compressed'])} compressed", "bytes"))
    draws = sum(r["draws"] for r in doc["levels"])
    cards.append(_card(draws, "draws", f"{len(doc['chunks'])} chunks, {len(doc['levels'])} levels", "draws"))
    return f"<section class=\"cards\">{''.join(cards)}</section>"


def _card_html(value: str, label: str, note: str, field: str) -> str:
    return (f"<div class=\"card\" data-figure=\"{field}\"><div class=\"big\">{value}</div>"
            f"<div class=\"label\">{escape(label)}</div><div class=\"note\">{escape(note)}</div></div>")


def _sum(rows: list[dict], field: str) -> int | str | None:
    values = [r[field] for r in rows]
    if any(isinstance(v, str) for v in values):
        return "open"  # an open feature's count: computed from facts, not a number
    return None if any(v is None for v in values) else sum(values)


def _card(value: int | None, label: str, note: str, field: str) -> str:
    return (f"<div class=\"card\" data-figure=\"{field}\"><div class=\"big\">{_short(value)}</div>"
            f"<div class=\"label\">{escape(label)}</div><div class=\"note\">{escape(note)}</div></div>")


def _short(value: int | str | None) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, str):
        return escape(value)
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**4, "k")):
        if value >= size:
            return f"<span title=\"{value:,}\">{value / size:.3g}{suffix}</span>"
    return f"{value:,}"


def _section(title: str, intro: str, *parts: str, ident: str = "") -> str:
    anchor = f" id=\"{ident}\"" if ident else ""
    return f"<section{anchor}><h2>{escape(title)}</h2><p class=\"intro\">{intro}</p>{''.join(parts)}</section>"


def _funnel_section(doc: dict) -> str:
    headers = ["family / pass", "possible", "valid", "required", "unique sources", "unique binaries", "cached",
               "missing", "failed", "pso"]
    rows = [[f"{r['shader']}/{r['pass']}" if r["pass"] != "*" else f"{r['shader']} (all passes)"]
            + [r[f] for f in ("possible", "valid", "required", "unique_sources", "unique_binaries", "cached",
                              "missing", "failed", "pso")] for r in doc["families"] + doc["totals"]]
    return _section("Funnel per family and pass",
                    "From every combination of static features down to what the GPU driver sees. "
                    "Log scale: each grid line is ten times the previous one.",
                    funnel_svg(doc["families"]), table_html("funnel", headers, rows), ident="funnel")


def _axes_section(doc: dict) -> str:
    rows = [[f"{r['shader']}/{r['pass']}", a["axis"], ", ".join(map(str, a["values"])), a["mode"], a["multiplier"],
             r["content_keys"], r["required"]] for r in doc.get("axes") or [] for a in r["axes"]]
    if not rows:
        return ""
    return _section("Runtime axes", "Values the renderer sets at run time: every content key is cooked for each "
                    "allowed combination (required keys = content keys x the axes' multipliers).",
                    table_html("axes", ["family / pass", "axis", "values", "mode", "multiplier", "content keys",
                                        "required"], rows), ident="axes")


def _what_if_section(doc: dict) -> str:
    what = doc.get("what_if")
    if not what:
        return ""
    shown = ", ".join(f"<code>{escape(k)}={escape(v)}</code>" for k, v in what["overrides"].items())
    headers = ["family / pass", "possible today", "possible what-if", "valid today", "valid what-if",
               "required today", "required what-if", "change"]
    rows = [[f"{r['shader']}/{r['pass']}", r["today"]["possible"], r["what_if"]["possible"], r["today"]["valid"],
             r["what_if"]["valid"], r["today"]["required"], r["what_if"]["required"],
             r["what_if"]["required"] - r["today"]["required"]] for r in what["families"]]
    return _section("What if", f"The same funnel as if the rule sets said {shown}.",
                    table_html("whatif", headers, rows), ident="what-if")


def _budget_section(doc: dict) -> str:
    if not doc["budgets"]:
        return ""
    items = "".join(_budget_item(b) for b in doc["budgets"])
    return _section("Budgets", "Required keys against each budget, and what pushed a scope over.",
                    f"<ul class=\"plain\">{items}</ul>", ident="budgets")


def _budget_item(b: dict) -> str:
    badge = "<span class=\"badge over\">over</span>" if b["over"] else "<span class=\"badge ok\">ok</span>"
    excess = f" (+{b['required'] - b['budget']})" if b["over"] else ""
    head = (f"{badge} <b>{escape(b['scope'])} {escape(b['name'])}</b>: {b['required']:,} required keys, "
            f"budget {b['budget']:,}{excess} <span class=\"muted\">set by {escape(b['origin'])}</span>")
    files = "".join(f"<li><code>{path_html(c['file'])}</code> {c['only_here']} only it needs</li>" for c in b["culprits"])
    feats = "".join(f"<li><code>{escape(f['feature'])}</code> would save {f['saved']}</li>" for f in b["features"])
    detail = (f"<div class=\"detail\">Keys only these files need:<ul>{files}</ul></div>" if files else "") + \
        (f"<div class=\"detail\">Made dynamic, these features would save keys:<ul>{feats}</ul></div>" if feats else "")
    return f"<li>{head}{detail}</li>"


def _since_section(doc: dict) -> str:
    since = doc.get("since")
    if not since:
        return ""
    keys = [f"<li class=\"add\">+ <code>{escape(k['key'])}</code></li>" for k in since["added"]]
    keys += [f"<li class=\"del\">&minus; <code>{escape(k['key'])}</code></li>" for k in since["removed"]]
    rows = [[f["file"], f["added"], f["removed"]] for f in since["files"]]
    intro = (f"Against <code>{path_html(since['old'])}</code>: <b>{len(since['added'])}</b> keys added, "
             f"<b>{len(since['removed'])}</b> removed.")
    totals = since.get("totals") or {}
    if totals:
        states, size = totals["pipeline_states"], totals.get("bytes")
        intro += (f" Pipeline states <b>+{states['added']:,}</b> &minus;{states['removed']:,}"
                  + (f"; bytes <b>+{size['added']:,}</b> &minus;{size['removed']:,}." if size else "."))
    return _section("Since the earlier report", intro, f"<ul class=\"plain keys\">{''.join(keys)}</ul>",
                    table_html("since", ["file", "keys added", "keys removed"], rows), ident="since")


def _chunk_section(doc: dict) -> str:
    levels = [[r["name"], r["required"], r["unique"], r["draws"], r["files"], r["budget"]] for r in doc["levels"]]
    chunks = [[r["name"], r["level"], r["required"], r["unique"], r["draws"], r["files"]] for r in doc["chunks"]]
    return _section("Levels and chunks",
                    "Required keys per chunk; the dark part of each bar is the keys no other chunk needs.",
                    chunks_svg(doc["chunks"]),
                    table_html("levels", ["level", "required", "unique", "draws", "files", "budget"], levels, "Levels"),
                    table_html("chunks", ["chunk", "level", "required", "unique", "draws", "files"], chunks, "Chunks"),
                    ident="chunks")


def _feature_section(doc: dict) -> str:
    rows = [[feature_label(r), r["values_used"], r["required"], r["if_dynamic"], r["saved"]]
            for r in doc["features"]]
    return _section("Feature contributions",
                    "For each static feature: the required keys that would remain were it a runtime branch "
                    "(<code>dynamic</code>).",
                    features_svg(doc["features"]),
                    table_html("features", ["feature", "values used", "required", "if dynamic", "saved"], rows),
                    ident="features")


def _contributor_section(doc: dict) -> str:
    files = [[r["file"], r["only_here"], r["keys"], r["draws"]] for r in doc["contributors"]["files"]]
    materials = [[r["file"], r["material"], r["only_here"], r["keys"], r["draws"]]
                 for r in doc["contributors"]["materials"] if r["only_here"] > 0]
    return _section("Files and materials", "Who needs keys that nothing else needs.",
                    table_html("files", ["file", "keys only it needs", "keys", "draws"], files, "Files"),
                    table_html("materials", ["file", "material", "keys only it needs", "keys", "draws"], materials,
                               "Materials with keys only they need"),
                    ident="files")


def _keys_section(doc: dict) -> str:
    explained = doc.get("explanations") or {}
    rows = [[key_link(k["key"], k["hash"], k["hash"] in explained), k["hash"][:12], k["pass"], k["draws"],
             len(k["chunks"]), len(k["files"])] for k in doc["keys"]]
    return _section("Required keys", "Every key the content needs; a key links to why it exists "
                                     "(<code>pipeline explain WORLD HASH</code> tells the same).",
                    table_html("keys", ["key", "hash", "pass", "draws", "chunks", "files"], rows), ident="keys")


def _errors_section(doc: dict) -> str:
    if not doc["errors"]:
        return ""
    items = [f"<li><code>{path_html(e['file'])}{escape(':' + e['pointer'] if e.get('pointer') else '')}</code> "
             f"{escape(e['severity'])}: {escape(e['message'])}</li>" for e in doc["errors"]]
    return _section("Problems", "Files or draws that produced no keys.", f"<ul class=\"plain\">{''.join(items)}</ul>",
                    ident="errors")


# ------------------------------------------------------------------ tables
def table_html(ident: str, headers: list[str], rows: list[list[Any]], caption: str = "") -> str:
    """A sortable table: numbers carry data-v and align right."""
    head = "".join(f"<th data-col=\"{i}\">{escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    title = f"<h3>{escape(caption)}</h3>" if caption else ""
    return (f"{title}<div class=\"scroll\"><table id=\"t-{ident}\" class=\"sortable\"><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")


def _cell(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"<td class=\"num\" data-v=\"{value}\">{number(value)}</td>"
    if value is None:
        return "<td class=\"num\" data-v=\"-1\">&ndash;</td>"
    if isinstance(value, Raw):
        return f"<td>{value}</td>"
    return f"<td>{path_html(value)}</td>"  # paths break after a slash, not mid-name


# ------------------------------------------------------------------ charts
def funnel_svg(rows: list[dict]) -> str:
    """Grouped horizontal bars per family/pass, log10 scale."""
    top = max([r[f] or 1 for r in rows for f, _, _ in STEPS if not isinstance(r[f], str)] + [10])
    decades = max(1, math.ceil(math.log10(top)))
    bar, gap, block = 15, 3, 22
    height_of = len(STEPS) * (bar + gap) + block
    height = 40 + len(rows) * height_of
    scale = (CHART_W - LABEL_W - 90) / decades

    def x_of(v: int) -> float:
        return LABEL_W + (math.log10(v) * scale if v >= 1 else 0)

    parts = [_legend(), _log_grid(decades, scale, height)]
    for i, r in enumerate(rows):
        y0 = 36 + i * height_of
        if i:
            parts.append(f"<line class=\"sep\" x1=\"0\" x2=\"{CHART_W}\" y1=\"{y0 - 10}\" y2=\"{y0 - 10}\"/>")
        parts.append(f"<text class=\"group\" x=\"4\" y=\"{y0 + 3 * (bar + gap) + 4}\">"
                     f"{escape(r['shader'])}/{escape(r['pass'])}</text>")
        for j, (field, label, color) in enumerate(STEPS):
            parts.append(_funnel_bar(r[field], label, color, y0 + j * (bar + gap), bar, x_of))
    return _svg("funnel-chart", height, "".join(parts), "Funnel per family and pass, log scale")


def _funnel_bar(value: int | None, label: str, color: str, y: float, bar: int, x_of) -> str:
    text_y = y + bar - 4
    name = f"<text class=\"step\" x=\"{LABEL_W - 14}\" y=\"{text_y}\" text-anchor=\"end\">{label}</text>"
    if value is None or isinstance(value, str):
        shown = "not cooked" if value is None else f"{value} (computed from facts)"
        return name + f"<text class=\"val muted\" x=\"{LABEL_W + 6}\" y=\"{text_y}\">{shown}</text>"
    width = max(x_of(value) - LABEL_W, 2)
    return (name + f"<rect x=\"{LABEL_W}\" y=\"{y}\" width=\"{width:.1f}\" height=\"{bar}\" rx=\"2\" fill=\"{color}\">"
            f"<title>{label}: {value:,}</title></rect>"
            f"<text class=\"val\" x=\"{LABEL_W + width + 6:.1f}\" y=\"{text_y}\">{value:,}</text>")


def _log_grid(decades: int, scale: float, height: int) -> str:
    lines = []
    for d in range(decades + 1):
        x = LABEL_W + d * scale
        label = _power(d)
        lines.append(f"<line class=\"grid\" x1=\"{x:.1f}\" x2=\"{x:.1f}\" y1=\"28\" y2=\"{height - 6}\"/>"
                     f"<text class=\"axis\" x=\"{x:.1f}\" y=\"22\" text-anchor=\"middle\">{label}</text>")
    return "".join(lines)


def _power(decade: int) -> str:
    """1, 10, 100, 1k, 10k, ... 1M ... 1G ... for the log axis."""
    for size, suffix in ((9, "G"), (6, "M"), (3, "k")):
        if decade >= size:
            return f"{10 ** (decade - size)}{suffix}"
    return str(10 ** decade)


def _legend() -> str:
    items, x = [], 0
    for _, label, color in STEPS:
        items.append(f"<rect x=\"{x}\" y=\"0\" width=\"10\" height=\"10\" rx=\"2\" fill=\"{color}\"/>"
                     f"<text class=\"legend\" x=\"{x + 14}\" y=\"9\">{label}</text>")
        x += 14 + 7 * len(label) + 18
    return f"<g transform=\"translate(4,2)\">{''.join(items)}</g>"


def chunks_svg(chunks: list[dict]) -> str:
    """Required keys per chunk (top chunks by required), the unique part darker."""
    ranked = sorted(chunks, key=lambda r: (-r["required"], r["name"]))[:TOP_CHUNKS]
    top = max([r["required"] for r in ranked] + [1])
    bar, gap = 16, 5
    height = 16 + len(ranked) * (bar + gap) + (18 if len(chunks) > len(ranked) else 0)
    scale = (CHART_W - LABEL_W - 150) / top
    parts = []
    for i, r in enumerate(ranked):
        y = 8 + i * (bar + gap)
        shared = r["required"] * scale
        alone = f" ({r['unique']} only here)" if r["unique"] else ""
        parts.append(f"<text class=\"step\" x=\"{LABEL_W - 10}\" y=\"{y + bar - 4}\" text-anchor=\"end\">"
                     f"<title>{escape(r['name'])}</title>{escape(_clip(r['name']))}</text>"
                     f"<rect x=\"{LABEL_W}\" y=\"{y}\" width=\"{max(shared, 1):.1f}\" height=\"{bar}\" rx=\"2\" "
                     f"fill=\"#a5b4fc\"><title>{escape(r['name'])}: {r['required']} keys</title></rect>"
                     f"<rect x=\"{LABEL_W}\" y=\"{y}\" width=\"{r['unique'] * scale:.1f}\" height=\"{bar}\" rx=\"2\" "
                     f"fill=\"#4f46e5\"><title>{r['unique']} only here</title></rect>"
                     f"<text class=\"val\" x=\"{LABEL_W + shared + 6:.1f}\" y=\"{y + bar - 4}\">{r['required']}"
                     f"{alone}</text>")
    if len(chunks) > len(ranked):
        parts.append(f"<text class=\"muted\" x=\"{LABEL_W}\" y=\"{height - 4}\">{len(chunks) - len(ranked)} more "
                     f"chunks in the table below</text>")
    return _svg("chunk-chart", height, "".join(parts), "Required keys per chunk")


def features_svg(features: list[dict]) -> str:
    """Keys saved per feature if it were dynamic (top features)."""
    ranked = [r for r in features if r["saved"] > 0][:TOP_FEATURES]
    if not ranked:
        return "<p class=\"muted\">No static feature multiplies the required keys.</p>"
    top = max(r["saved"] for r in ranked)
    bar, gap = 16, 5
    height = 16 + len(ranked) * (bar + gap)
    scale = (CHART_W - LABEL_W - 190) / top
    parts = []
    for i, r in enumerate(ranked):
        y = 8 + i * (bar + gap)
        width = r["saved"] * scale
        parts.append(f"<text class=\"step\" x=\"{LABEL_W - 10}\" y=\"{y + bar - 4}\" text-anchor=\"end\">"
                     f"{escape(feature_label(r))}</text>"
                     f"<rect x=\"{LABEL_W}\" y=\"{y}\" width=\"{width:.1f}\" height=\"{bar}\" rx=\"2\" "
                     f"fill=\"#d97706\"><title>{escape(feature_label(r))}: {r['required']} &#8594; {r['if_dynamic']}"
                     f"</title></rect>"
                     f"<text class=\"val\" x=\"{LABEL_W + width + 6:.1f}\" y=\"{y + bar - 4}\">&minus;{r['saved']} "
                     f"({r['required']} &#8594; {r['if_dynamic']} keys)</text>")
    return _svg("feature-chart", height, "".join(parts), "Keys saved if a feature were dynamic")


def _clip(text: str, limit: int = 44) -> str:
    return text if len(text) <= limit else "\u2026" + text[-(limit - 1):]


def _svg(ident: str, height: int, inner: str, title: str) -> str:
    return (f"<figure class=\"wide\"><svg id=\"{ident}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
            f"viewBox=\"0 0 {CHART_W} {height}\" width=\"100%\" aria-label=\"{escape(title)}\">"
            f"<title>{escape(title)}</title>{inner}</svg></figure>")
