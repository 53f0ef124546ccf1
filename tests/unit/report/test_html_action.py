"""The report page's action list, sizes, compile times, trend charts, provenance and key explanations."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from pipeline.report.html_action import (
    Raw,
    action_section,
    explanations_section,
    history_section,
    key_html,
    key_link,
    mib,
    path_html,
    provenance_line,
    required_total,
    sizes_section,
    timings_section,
)

VOID = {"wbr", "br", "input", "img", "meta", "link", "hr"}  # SVG elements close themselves (/>)


class Balance(HTMLParser):
    """Checks every element is closed in order; collects the text and the attributes seen."""

    def __init__(self) -> None:
        super().__init__()
        self.stack, self.text, self.attrs = [], [], []

    def handle_starttag(self, tag, attrs):
        self.attrs.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.attrs.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, f"</{tag}> closes nothing open"

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Balance:
    parser = Balance()
    parser.feed(html)
    parser.close()
    assert parser.stack == [], f"unclosed: {parser.stack}"
    return parser


def text(html: str) -> str:
    return "".join(parse(html).text)


def section(title, intro, *parts, ident=""):
    return f"<section id=\"{ident}\"><h2>{title}</h2><p>{intro}</p>{''.join(parts)}</section>"


def table_html(ident, headers, rows, caption=""):
    cells = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table id=\"t-{ident}\" data-headers=\"{','.join(headers)}\">{cells}</table>"


def doc(**extra) -> dict:
    base = {"format": 7, "budgets": [], "errors": [], "totals": [{"required": 3}, {"required": 4}], "keys": []}
    return {**base, **extra}


def test_key_html_breaks_only_after_commas_and_braces_and_escapes() -> None:
    assert key_html("pbr/forward{A=1,B=<x>}") == \
        "<span class=\"key\">pbr/forward{<wbr>A=1,<wbr>B=&lt;x&gt;}</span>"
    assert text(key_html("pbr/forward{A=1,B=<x>}")) == "pbr/forward{A=1,B=<x>}"


def test_path_html_breaks_after_slashes_and_escapes() -> None:
    assert path_html("a/b&c/d.gltf") == "a/<wbr>b&amp;c/<wbr>d.gltf"


def test_key_link_points_at_the_explanation_when_there_is_one() -> None:
    linked = key_link("k{A=1}", "0123456789abcdef0123", True)
    assert isinstance(linked, Raw) and ("a", {"href": "#k-0123456789abcdef"}) in parse(linked).attrs
    assert key_link("k{A=1}", "0123456789abcdef0123", False) == key_html("k{A=1}")


@pytest.mark.parametrize("n, shown", [(None, "&ndash;"), (0, "0.0 KiB"), (1536, "1.5 KiB"),
                                      (1024 * 1024 - 1, f"{(1024 * 1024 - 1) / 1024:,.1f} KiB"),
                                      (1024 * 1024, "1.00 MiB"), (5 * 1024 * 1024 + 10 * 1024, "5.01 MiB")])
def test_mib(n, shown) -> None:
    assert mib(n) == shown


def test_provenance_line() -> None:
    line = provenance_line(doc(provenance={"tool": "pipeline", "tool_version": "1.2<3", "rules_hash": "r" * 40,
                                           "git_revision": "0123456789abcdef+dirty", "timestamp": "T"}))
    words = text(line)
    assert "pipeline 1.2<3" in words and "r" * 12 + " " in words and "r" * 13 not in words
    assert "world 0123456789ab " in words and "report format 7" in words
    assert "not in git" in text(provenance_line(doc(provenance={})))


def test_required_total() -> None:
    assert required_total(doc()) == 7


def test_status_when_nothing_needs_action() -> None:
    html = action_section(doc(budgets=[{"scope": "level", "name": "forest", "required": 5, "budget": 9, "over": False}]))
    words = text(html)
    assert ("section", {"class": "action", "id": "action"}) in parse(html).attrs
    assert "Status" in words and "Within budget: level forest 5 of 9 keys" in words
    assert "Required keys: 7" in words and "not cooked yet" in words
    assert "--since OLD.json" in words  # how to see changes


def test_over_budget_and_errors_need_action() -> None:
    html = action_section(doc(
        budgets=[{"scope": "chunk", "name": "b", "required": 12, "budget": 10, "over": True},
                 {"scope": "level", "name": "a", "required": 1, "budget": 10, "over": False}],
        errors=[{"severity": "error"}, {"severity": "warning"}, {"severity": "error"}],
        fallback_keys=[{}, {}],
        sizes={"total": {"blobs": 3, "bytes": 2048, "compressed": 1024}, "compression": "zlib"},
        timings={"seconds": 1.234, "jobs_timed": 2, "jobs_planned": 5}))
    words = text(html)
    assert ("section", {"class": "action bad", "id": "action"}) in parse(html).attrs and "Needs action" in words
    assert words.index("Over budget") < words.index("Within budget")  # over first
    assert "needs 12 keys, budget 10 (+2)" in words and "2 errors in the content" in words
    assert "(+2 fallback keys" in words and "3 SPIR-V blobs, 2.0 KiB (1.0 KiB compressed, zlib)" in words
    assert "1.23 s (2 of 5 jobs timed)" in words


def test_changes_since_an_earlier_report_or_the_previous_build() -> None:
    since = {"old": "r/old.json", "added": [1, 2], "removed": [3], "warning": "scope <mismatch>"}
    words = text(action_section(doc(since=since)))
    assert "Since r/old.json: +2 / \u22121 keys" in words and "scope <mismatch>" in words
    history = [{"label": "old", "required": 1}, {"label": "a<", "required": 10}, {"label": "now", "required": 7}]
    assert "Since the previous build (a<): required keys 10 \u2192 7 (-3)" in text(action_section(doc(history=history)))


def test_sizes_section() -> None:
    assert sizes_section(doc(), section, table_html) == ""
    sizes = {"compression": "zlib", "total": {"blobs": 3, "bytes": 30, "compressed": 20},
             "levels": [{"name": "L", "blobs": 3, "bytes": 30, "compressed": 20}],
             "chunks": [{"name": "L/c", "level": "L", "blobs": 2, "bytes": 10, "compressed": 5}]}
    html = sizes_section(doc(sizes=sizes), section, table_html)
    assert html.startswith("<section id=\"sizes\">")
    assert "<tr><td>L</td><td>3</td><td>30</td><td>20</td></tr><tr><td>total</td><td>3</td>" in html
    assert "<tr><td>L/c</td><td>L</td><td>2</td><td>10</td><td>5</td></tr>" in html


def test_timings_section_with_and_without_a_log() -> None:
    assert "No compile of these jobs" in timings_section(doc(), section, table_html)
    timings = {"jobs_timed": 1, "jobs_planned": 2, "seconds": 0.5,
               "families": [{"family": "pbr", "jobs": 1, "seconds": 0.5, "max_seconds": 0.5}],
               "slowest": [{"key": "pbr/f{A=1}", "source": "pbr.frag", "stage": "fragment", "seconds": 0.5}]}
    html = timings_section(doc(timings=timings), section, table_html)
    assert "1 of 2 jobs, 0.50 s in all" in html and "<td>0.5000 s</td>" in html and key_html("pbr/f{A=1}") in html


def test_history_section_draws_one_chart_per_figure() -> None:
    assert history_section(doc(), section) == ""
    points = [{"label": "a", "required": 10, "binaries": None, "bytes": None},
              {"label": "b", "required": 20, "binaries": None, "bytes": 4096}]
    html = history_section(doc(history=points), section)
    parsed = parse(html)
    ids = [a["id"] for tag, a in parsed.attrs if tag == "svg"]
    assert ids == ["history-required", "history-bytes"]  # binaries not known for any build: no chart
    assert "unique binaries: not known" in text(html)
    circles = [a for tag, a in parsed.attrs if tag == "circle"]
    assert len(circles) == 3  # two required points, one bytes point
    first, second = circles[:2]
    assert float(first["cy"]) > float(second["cy"])  # the larger value is drawn higher


def test_explanations_section() -> None:
    assert explanations_section(doc(), section) == ""
    draws = [{"file": "c/a.gltf", "node": i, "material": 0 if i else None} for i in range(10)]
    explanations = {"h1": {"key": "pbr/f{A=1}", "hash": "ab" * 32, "draws": draws,
                           "rules": [{"feature": "A", "key_value": 1, "value": True, "rule": "rules/pbr.yaml:3"},
                                     {"feature": "B", "key_value": None, "value": 0, "rule": None}],
                           "normalize": [{"rule": "rules/pbr.yaml:9", "description": "A implies <B>"}]}}
    names = {"c/a.gltf": {"nodes": {"1": "trunk"}, "materials": {"0": "bark"}}}
    html = explanations_section(doc(explanations=explanations, names=names, keys=[{}, {}, {}]), section)
    words = text(html)
    assert ("div", {"class": "explain", "id": "k-" + "ab" * 8}) in parse(html).attrs
    assert "node 1 trunk, material 0 bark" in words and "node 0, material default" in words
    assert "node 8" not in words and "2 more draws" in words  # eight shown
    assert "A=1 rules/pbr.yaml:3" in words and "B=" not in words  # only features a rule set
    assert "normalize rules/pbr.yaml:9: A implies <B>" in words
    assert "2 more keys" in words
