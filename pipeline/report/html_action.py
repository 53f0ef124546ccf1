"""The parts of the report page a tech lead reads first: what needs action, binary sizes,
compile times, the trend across builds, provenance, and each key's explanation."""

from __future__ import annotations

from html import escape

from pipeline.report.render import number, target_table

HISTORY_W, HISTORY_H = 320, 150


class Raw(str):
    """Already-escaped HTML for a table cell."""


def key_html(text: str) -> str:
    """A key that wraps only after its commas and braces, never inside a feature name."""
    return "<span class=\"key\">" + "<wbr>".join(escape(text).replace(",", ",\x00").replace("{", "{\x00")
                                                 .split("\x00")) + "</span>"


def path_html(text: str) -> str:
    """A path that wraps only after its slashes, never inside a folder or file name."""
    return escape(str(text)).replace("/", "/<wbr>")


def key_link(text: str, key_hash: str, explained: bool) -> Raw:
    body = key_html(text)
    return Raw(f"<a href=\"#k-{key_hash[:16]}\">{body}</a>" if explained else body)


def mib(n: int | None) -> str:
    if n is None:
        return "&ndash;"
    return f"{n / 1024:,.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.2f} MiB"


def provenance_line(doc: dict) -> str:
    p = doc.get("provenance") or {}
    git = f"<code>{escape(p['git_revision'][:12])}</code>" if p.get("git_revision") else "not in git"
    return (f"<p class=\"prov\" id=\"provenance\">{escape(p.get('tool', 'pipeline'))} "
            f"{escape(str(p.get('tool_version', '?')))} &middot; rules <code>{escape(str(p.get('rules_hash', ''))[:12])}"
            f"</code> &middot; world {git} &middot; <time>{escape(str(p.get('timestamp', '')))}</time> &middot; "
            f"report format {doc.get('format')}</p>")


def filter_box() -> str:
    return ("<div id=\"filter-box\"><input id=\"filter\" type=\"search\" placeholder=\"Filter keys, files, chunks\" "
            "aria-label=\"Filter the tables\"><span id=\"filter-count\"></span></div>")


def required_total(doc: dict) -> int:
    return sum(r["required"] for r in doc["totals"])


def action_section(doc: dict) -> str:
    """Over-budget scopes (red), errors, changes since the last report, binary size, compile time."""
    items, bad = [], False
    for b in sorted(doc["budgets"], key=lambda b: (not b["over"], b["scope"], b["name"])):
        if b["over"]:
            bad = True
            items.append(f"<li data-action=\"over-budget\"><span class=\"over-text\">Over budget</span>: "
                         f"{escape(b['scope'])} <b>{escape(b['name'])}</b> needs <b class=\"over-text\" "
                         f"data-figure=\"budget-required\">{b['required']:,}</b> keys, budget {b['budget']:,} "
                         f"(+{b['required'] - b['budget']:,})</li>")
        else:
            items.append(f"<li data-action=\"budget\"><span class=\"ok-text\">Within budget</span>: "
                         f"{escape(b['scope'])} <b>{escape(b['name'])}</b> {b['required']:,} of {b['budget']:,} keys"
                         f"</li>")
    errors = [e for e in doc["errors"] if e.get("severity") == "error"]
    if errors:
        bad = True
        items.append(f"<li data-action=\"errors\"><span class=\"bad-text\">{len(errors)} error"
                     f"{'s' if len(errors) != 1 else ''}</span> in the content: <a href=\"#errors\">see Problems</a></li>")
    items.append(_change_item(doc))
    fallbacks = len(doc.get("fallback_keys") or ())
    extra = f" (+{fallbacks:,} fallback keys, cooked though no draw requires them)" if fallbacks else ""
    items.append(f"<li data-action=\"required\">Required keys: <b data-figure=\"required-total\">"
                 f"{required_total(doc):,}</b>{extra}</li>")
    sizes = doc.get("sizes")
    if sizes:
        t = sizes["total"]
        items.append(f"<li data-action=\"bytes\">Binaries: <b data-figure=\"binaries-total\">{t['blobs']:,}</b> SPIR-V "
                     f"blobs, <b data-figure=\"bytes-total\" data-v=\"{t['bytes']}\">{mib(t['bytes'])}</b> "
                     f"(<span data-figure=\"compressed-total\" data-v=\"{t['compressed']}\">{mib(t['compressed'])}"
                     f"</span> compressed, {escape(sizes['compression'])})</li>")
    else:
        items.append("<li data-action=\"bytes\">Binaries: not cooked yet (run <code>pipeline cook</code>)</li>")
    timings = doc.get("timings")
    if timings:
        items.append(f"<li data-action=\"compile-time\">Compile time of these jobs: <b>{timings['seconds']:.2f} s</b> "
                     f"({timings['jobs_timed']} of {timings['jobs_planned']} jobs timed)</li>")
    cls = "action bad" if bad else "action"
    return (f"<section class=\"{cls}\" id=\"action\"><h2>{'Needs action' if bad else 'Status'}</h2>"
            f"<ul>{''.join(items)}</ul></section>")


def _change_item(doc: dict) -> str:
    since = doc.get("since")
    if since:
        warn = f" <span class=\"bad-text\">{escape(since['warning'])}</span>" if since.get("warning") else ""
        return (f"<li data-action=\"since\">Since <code>{path_html(since['old'])}</code>: "
                f"<b>+{len(since['added'])}</b> / <b>&minus;{len(since['removed'])}</b> keys "
                f"(<a href=\"#since\">which</a>){warn}</li>")
    history = doc.get("history") or []
    if len(history) >= 2:
        a, b = history[-2], history[-1]
        delta = b["required"] - a["required"]
        return (f"<li data-action=\"since\">Since the previous build ({escape(a['label'])}): required keys "
                f"{a['required']:,} &#8594; {b['required']:,} ({delta:+,})</li>")
    return ("<li data-action=\"since\" class=\"muted\">Changes since the last report: give <code>--since OLD.json"
            "</code> or <code>--history DIR</code></li>")


def sizes_section(doc: dict, section, table_html) -> str:
    sizes = doc.get("sizes")
    if not sizes:
        return ""
    def rows(items, with_level=False):
        return [[r["name"], *([r["level"]] if with_level else []), r["blobs"], r["bytes"], r["compressed"]]
                for r in items]
    total = sizes["total"]
    shipped = " The total is the shipped shaders.pak on disk." if total.get("library") else ""
    return section("Binary sizes", f"Distinct SPIR-V blobs the required keys use, in bytes, and compressed "
                   f"({escape(sizes['compression'])}). A blob shared by chunks counts once per scope.{shipped}",
                   table_html("size-levels", ["level", "blobs", "bytes", "compressed"],
                              rows(sizes["levels"]) + [["total", total["blobs"], total["bytes"], total["compressed"]]],
                              "Per level and in total"),
                   table_html("size-chunks", ["chunk", "level", "blobs", "bytes", "compressed"],
                              rows(sizes["chunks"], True), "Per chunk"), ident="sizes")


def targets_section(doc: dict, section, table_html) -> str:
    """The funnel and binary sizes per compile target (and the platforms that ship it)."""
    found = target_table(doc)
    if found is None:
        return ""
    return section("Per compile target", "Each family's keys are compiled once per target: the funnel down to "
                   "that target's jobs, its distinct binaries and bytes. A target a family cannot express fails "
                   "in its own row; the family's other targets still cook. '*' sums a target's families.",
                   table_html("targets", *found), ident="targets")


def timings_section(doc: dict, section, table_html) -> str:
    t = doc.get("timings")
    if not t:
        return section("Compile time", "No compile of these jobs is in the timing log yet (it fills as "
                       "<code>pipeline cook</code> compiles; cached jobs keep their last time).", ident="timings")
    fam = [[f["family"], f["jobs"], f"{f['seconds']:.3f} s", f"{f['max_seconds']:.4f} s"] for f in t["families"]]
    jobs = [[Raw(key_html(j["key"] or "?")), j["source"], j["stage"], f"{j['seconds']:.4f} s"] for j in t["slowest"]]
    return section("Compile time", f"The last logged compile of each job these keys need: {t['jobs_timed']} of "
                   f"{t['jobs_planned']} jobs, {t['seconds']:.2f} s in all (<code>pipeline report --timings</code>).",
                   table_html("time-families", ["family", "jobs", "total", "slowest"], fam, "Per family"),
                   table_html("time-jobs", ["key", "source", "stage", "time"], jobs, "Slowest jobs"),
                   ident="timings")


def history_section(doc: dict, section) -> str:
    points = doc.get("history")
    if not points:
        return ""
    charts = [_line_chart(points, "required", "required keys", "#4f46e5"),
              _line_chart(points, "binaries", "unique binaries", "#0d9488"),
              _line_chart(points, "bytes", "binary bytes", "#d97706")]
    return section("Across builds", f"{len(points)} builds: the earlier JSON reports of <code>--history</code>, then "
                   "this one.", f"<div class=\"history\">{''.join(charts)}</div>", ident="history")


def _line_chart(points: list[dict], field: str, title: str, color: str) -> str:
    values = [p[field] for p in points]
    known = [v for v in values if v is not None]
    if not known:
        return f"<figure><p class=\"muted\">{escape(title)}: not known for these builds</p></figure>"
    top, left, pad = max(known) or 1, 12, 16
    step = (HISTORY_W - left - pad) / max(1, len(points) - 1)

    def xy(i: int, v: int) -> tuple[float, float]:
        return left + i * step, HISTORY_H - 24 - (v / top) * (HISTORY_H - 62)

    coords = [(xy(i, v), v, points[i]["label"]) for i, v in enumerate(values) if v is not None]
    path = " ".join(f"{'M' if n == 0 else 'L'}{x:.1f},{y:.1f}" for n, ((x, y), _, _) in enumerate(coords))
    dots = "".join(f"<circle cx=\"{x:.1f}\" cy=\"{y:.1f}\" r=\"3\" fill=\"{color}\"><title>{escape(str(label))}: "
                   f"{v:,}</title></circle>" for (x, y), v, label in coords)
    ident = f"history-{field}"
    return (f"<figure><svg id=\"{ident}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
            f"viewBox=\"0 0 {HISTORY_W} {HISTORY_H}\" width=\"100%\" aria-label=\"{escape(title)} per build\">"
            f"<text class=\"group\" x=\"4\" y=\"14\">{escape(title)}</text>"
            f"<text class=\"axis\" x=\"{left}\" y=\"{xy(0, top)[1] - 8:.1f}\">max {number(top)}</text>"
            f"<text class=\"axis\" x=\"{left}\" y=\"{xy(0, 0)[1] + 14:.1f}\">0</text>"
            f"<line class=\"grid\" x1=\"{left}\" x2=\"{HISTORY_W - pad}\" y1=\"{xy(0, 0)[1]:.1f}\" "
            f"y2=\"{xy(0, 0)[1]:.1f}\"/><path d=\"{path}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>"
            f"{dots}<text class=\"axis\" x=\"{HISTORY_W - pad}\" y=\"{HISTORY_H - 6}\" text-anchor=\"end\">"
            f"latest {number(values[-1]) if values[-1] is not None else '-'}</text></svg></figure>")


def explanations_section(doc: dict, section) -> str:
    docs = doc.get("explanations") or {}
    if not docs:
        return ""
    names = doc.get("names") or {}
    parts = [_explanation(e, names) for _, e in sorted(docs.items(), key=lambda kv: kv[1]["key"])]
    more = len(doc["keys"]) - len(docs)
    tail = f"<p class=\"muted\">{more} more keys: <code>pipeline explain WORLD HASH</code></p>" if more > 0 else ""
    return section("Why each key exists", "The draws that need each key (with the names the glTF files give their "
                   "nodes and materials) and the rules that set its features.", *parts, tail, ident="explain")


def _explanation(e: dict, names: dict) -> str:
    draws = e["draws"]
    shown = "".join(f"<li><code>{path_html(d['file'])}</code> node {_named(names, d['file'], 'nodes', d['node'])}, "
                    f"material {_named(names, d['file'], 'materials', d['material'])}</li>" for d in draws[:8])
    if len(draws) > 8:
        shown += f"<li class=\"muted\">{len(draws) - 8} more draws</li>"
    rules = "".join(f"<li><code>{escape(r['feature'])}={escape(str(r['key_value'] if r['key_value'] is not None else r['value']))}</code> "
                    f"<span class=\"muted\">{path_html(r['rule'] or 'default')}</span></li>"
                    for r in e["rules"] if r["rule"])
    norm = "".join(f"<li>normalize <span class=\"muted\">{path_html(n['rule'])}</span>: {escape(n['description'])}</li>"
                   for n in e["normalize"])
    return (f"<div class=\"explain\" id=\"k-{e['hash'][:16]}\"><h3>{key_html(e['key'])}</h3>"
            f"<div class=\"muted\">hash <code>{e['hash'][:12]}</code> &middot; {len(draws)} draws</div>"
            f"<ul>{shown}</ul><ul>{rules}{norm}</ul></div>")


def _named(names: dict, file: str, part: str, index) -> str:
    if index is None:
        return "default"
    name = names.get(file, {}).get(part, {}).get(str(index))
    return f"{index} <b>{escape(name)}</b>" if name else str(index)
