"""The HTML report: self-contained, and rendered by a real browser (headless Chromium)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.report.html import render_html
from paths import REPO

ROOT = REPO
SAMPLE = ROOT / "examples" / "sample_world"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("html")
    cache = tmp / "cache"
    api.cook(SAMPLE, cache=cache, out=tmp / "out", jobs=1)
    out = tmp / "report.html"
    result = CliRunner().invoke(main, ["report", str(SAMPLE), "--cache", str(cache), "-f", "html", "-o", str(out),
                                       "--what-if", "pbr.NORMAL_MAP=dynamic"])
    assert result.exit_code == 0, result.output
    return out, api.report(SAMPLE, cache=cache).to_json()


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("headless Chromium not installed (script/bootstrap test installs it)")
    return found


def browse(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=60)


def test_page_is_self_contained(page):
    html = page[0].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    for ident in ("funnel-chart", "chunk-chart", "feature-chart"):
        assert f'<svg id="{ident}"' in html


def test_funnel_chart_is_on_a_log_scale(page):
    doc = page[1]
    html = render_html(doc)
    forward = next(r for r in doc["families"] if r["pass"] == "forward")
    widths = {}
    for label in ("possible", "required"):
        match = re.search(rf'width="([\d.]+)" height="15" rx="2" fill="[^"]+"><title>{label}: {forward[label]:,}',
                          html)
        widths[label] = float(match.group(1))
    ratio = widths["possible"] / widths["required"]
    expected = math.log10(forward["possible"]) / math.log10(forward["required"])
    assert abs(ratio - expected) < 0.02


@pytest.mark.browser
def test_chromium_renders_the_figures_and_sorts(page, tmp_path):
    path, doc = page
    dom = browse(tmp_path, "--virtual-time-budget=3000", "--dump-dom", f"{path.as_uri()}#sort=chunks:required:asc")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    for ident in ("funnel-chart", "chunk-chart", "feature-chart"):
        assert f'id="{ident}"' in html
    (total,) = [t for t in doc["totals"] if t["shader"] == "pbr"]  # the corpus uses only pbr
    assert f"{total['possible']:,}" in html and f">{total['required']}<" in html
    for chunk in doc["chunks"]:
        assert chunk["name"] in html
    assert 'data-sorted="2:asc"' in html  # the page's script ran and sorted the chunks table
    body = html[html.index('id="t-chunks"'):]
    body = body[:body.index("</table>")]
    order = re.findall(r'<td>([a-z]+/<wbr>[a-z0-9]+)</td><td>[a-z]+</td><td class="num" data-v="(\d+)"', body)
    assert [int(v) for _, v in order] == sorted(r["required"] for r in doc["chunks"])


@pytest.mark.browser
def test_chromium_takes_a_screenshot(page, tmp_path):
    shot = tmp_path / "report.png"
    done = browse(tmp_path, f"--screenshot={shot}", "--window-size=1400,2000", page[0].as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


# ---- what a tech lead sees first: a world over budget, with history, at two widths and in print

@pytest.fixture(scope="module")
def over(tmp_path_factory) -> tuple[Path, dict]:
    """The sample world cooked, an earlier JSON report in a history folder, then an HTML report over budget."""
    tmp = tmp_path_factory.mktemp("over")
    cache = tmp / "cache"
    api.cook(SAMPLE, cache=cache, out=tmp / "out", jobs=1)
    history = tmp / "history"
    history.mkdir()
    earlier = CliRunner().invoke(main, ["report", str(SAMPLE), "--cache", str(cache), "-f", "json",
                                        "-o", str(history / "build-1.json")])
    assert earlier.exit_code == 0, earlier.output
    out = tmp / "over.html"
    args = ["report", str(SAMPLE), "--cache", str(cache), "--budget", "10", "--history", str(history)]
    result = CliRunner().invoke(main, [*args, "-f", "html", "-o", str(out)])
    assert result.exit_code == 1, result.output  # over budget: exit 1, page still written
    doc = json.loads(CliRunner().invoke(main, [*args, "-f", "json"]).stdout)
    return out, doc


def _dom(tmp_path: Path, path: Path, width: int = 1280) -> str:
    dom = browse(tmp_path, "--virtual-time-budget=3000", f"--window-size={width},2000", "--dump-dom", path.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def _figure(html: str, name: str) -> re.Match:
    found = re.search(rf'data-figure="{name}"(?: data-v="(\d+)")?>([^<]+)<', html)
    assert found, name
    return found


@pytest.mark.slow
def test_json_report_carries_format_and_provenance(over):
    doc = over[1]
    assert doc["format"] == 3
    prov = doc["provenance"]
    assert prov["tool"] == "pipeline" and prov["tool_version"] and len(prov["rules_hash"]) == 64
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", prov["timestamp"])
    assert prov["git_revision"] is None or re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", prov["git_revision"])
    sizes = doc["sizes"]
    assert sizes["total"]["bytes"] > sizes["total"]["compressed"] > 0
    assert sum(c["blobs"] for c in sizes["chunks"]) >= sizes["total"]["blobs"] == _total(doc, "unique_binaries")
    assert [p["required"] for p in doc["history"]] == [_total(doc, "required")] * 2
    assert doc["timings"]["jobs_timed"] == doc["timings"]["jobs_planned"] == _total(doc, "unique_sources")


@pytest.mark.browser
def test_the_page_leads_with_what_needs_action_and_its_figures_match_the_json(over, tmp_path):
    path, doc = over
    html = _dom(tmp_path, path)
    main_part = html[html.index("<main>"):]
    sections = re.findall(r'<section class="([^"]*)"(?: id="([^"]*)")?', main_part)
    assert sections[0] == ("action bad", "action")  # the first thing on the page, marked bad
    action = main_part[main_part.index('id="action"'):main_part.index("</section>")]
    assert action.index('data-action="over-budget"') < action.index('data-action="required"')
    assert '<span class="over-text">Over budget</span>' in action
    assert re.search(r"\.over-text[^{]*\{color:#b91c1c", html)  # red
    (budget,) = doc["budgets"]
    assert budget["over"] and _figure(action, "budget-required").group(2) == f"{budget['required']:,}"
    total, sizes = {"required": _total(doc, "required")}, doc["sizes"]["total"]
    assert _figure(action, "required-total").group(2) == f"{total['required']:,}"
    assert _figure(action, "binaries-total").group(2) == f"{sizes['blobs']:,}"
    assert int(_figure(action, "bytes-total").group(1)) == sizes["bytes"]
    assert int(_figure(action, "compressed-total").group(1)) == sizes["compressed"]
    table = html[html.index('id="t-size-chunks"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr><td>((?:[^<]|<wbr>)+)</td><td>[^<]+</td><td class="num" data-v="(\d+)">[^<]*</td>'
                      r'<td class="num" data-v="(\d+)">[^<]*</td><td class="num" data-v="(\d+)">', table)
    assert [(name.replace("<wbr>", ""), *rest) for name, *rest in rows] == \
        [(c["name"], str(c["blobs"]), str(c["bytes"]), str(c["compressed"])) for c in doc["sizes"]["chunks"]]
    prov = doc["provenance"]
    assert prov["rules_hash"][:12] in html and "report format 3" in html
    assert 'id="history-required"' in html and 'id="history-bytes"' in html
    for family in doc["timings"]["families"]:
        assert f"<td>{family['family']}</td><td class=\"num\" data-v=\"{family['jobs']}\">" in html


@pytest.mark.browser
def test_keys_link_to_their_explanations_and_names_come_from_the_gltf(over, tmp_path):
    path, doc = over
    html = _dom(tmp_path, path)
    for key in doc["keys"]:
        anchor = f'href="#k-{key["hash"][:16]}"'
        assert anchor in html and f'id="k-{key["hash"][:16]}"' in html
    assert re.search(r"material 0 \((bark|rock|leaves)\)", html)  # names from the files, not "material 0" alone
    assert re.search(r"node \d+ <b>[a-z_0-9]+</b>", html)
    assert '<input id="filter" type="search"' in html
    key = html[html.index('<span class="key">pbr/'):]
    assert "ALPHA_MODE=" in key[:200] and "<wbr>" in key[:200]  # breaks after commas, not inside names
    assert ".key{" in html and "word-break:normal" in html


@pytest.mark.slow
@pytest.mark.browser
def test_phone_desktop_and_print(over, tmp_path):
    path, _ = over
    for width, height in ((390, 2400), (1280, 2200)):
        shot = tmp_path / f"over-{width}.png"
        done = browse(tmp_path, f"--screenshot={shot}", f"--window-size={width},{height}", path.as_uri())
        assert done.returncode == 0, done.stderr[-2000:]
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(data[16:20], "big") == width
    pdf = tmp_path / "over.pdf"
    done = browse(tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", path.as_uri())
    assert done.returncode == 0 and pdf.read_bytes()[:5] == b"%PDF-"
    html = path.read_text()
    printed = html[html.index("@media print{"):]
    assert ".scroll{max-height:none!important;overflow:visible!important" in printed
    assert "th{position:static}" in printed


# ---- the corpus and the world over budget, at a phone and a desktop width and printed, against the JSON report

WIDTHS = (390, 1280)  # a phone, a desktop


def _shots_dir(tmp_path: Path) -> Path:
    """Where screenshots go: $PIPELINE_SCREENSHOTS (to look at them) or the test's temp folder."""
    folder = Path(os.environ.get("PIPELINE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def corpus_page(corpus, tmp_path_factory) -> tuple[Path, dict]:
    """The corpus cooked, one earlier JSON report in a history folder, then the HTML and JSON reports."""
    tmp = tmp_path_factory.mktemp("corpus")
    cache = tmp / "cache"
    api.cook(corpus, cache=cache, out=tmp / "out", jobs=2)
    (tmp / "history").mkdir()
    args = ["report", str(corpus), "--cache", str(cache)]
    assert CliRunner().invoke(main, [*args, "-f", "json", "-o", str(tmp / "history" / "b1.json")]).exit_code in (0, 1)
    out = tmp / "corpus.html"
    CliRunner().invoke(main, [*args, "--history", str(tmp / "history"), "-f", "html", "-o", str(out)])
    assert out.is_file()
    doc = json.loads(CliRunner().invoke(main, [*args, "--history", str(tmp / "history"), "-f", "json"]).stdout)
    return out, doc


def _total(doc: dict, field: str) -> int:
    """A figure over every family of the report (the sample world has three)."""
    return sum(t[field] or 0 for t in doc["totals"])


def _check_figures(html: str, doc: dict) -> None:
    """The figures the page leads with and its size tables, against the JSON report."""
    main_part = html[html.index("<main>"):]
    action = main_part[main_part.index('id="action"'):]
    action = action[:action.index("</section>")]
    total, sizes = {"required": _total(doc, "required")}, doc["sizes"]["total"]
    assert _figure(action, "required-total").group(2) == f"{total['required']:,}"
    assert _figure(action, "binaries-total").group(2) == f"{sizes['blobs']:,}"
    assert int(_figure(action, "bytes-total").group(1)) == sizes["bytes"]
    assert int(_figure(action, "compressed-total").group(1)) == sizes["compressed"]
    errors = len([e for e in doc["errors"] if e["severity"] == "error"])
    if errors:
        assert f"{errors} error" in re.sub(r"<[^>]+>", "", action)
    for ident, items in (("size-levels", doc["sizes"]["levels"]), ("size-chunks", doc["sizes"]["chunks"])):
        table = html[html.index(f'id="t-{ident}"'):]
        table = table[:table.index("</table>")]
        cells = re.findall(r'<tr><td>((?:[^<]|<wbr>)+)</td>(?:<td>[^<]+</td>)?<td class="num" data-v="(\d+)">[^<]*</td>'
                           r'<td class="num" data-v="(\d+)">[^<]*</td><td class="num" data-v="(\d+)">', table)
        shown = {name.replace("<wbr>", "").replace("&amp;", "&"): tuple(map(int, rest)) for name, *rest in cells}
        for item in items:
            assert shown[item["name"]] == (item["blobs"], item["bytes"], item["compressed"]), item["name"]
    assert [p["required"] for p in doc["history"]][-1] == total["required"]


def _printed_text(tmp_path: Path, page: Path, name: str) -> str:
    """The page printed by Chromium to PDF, its text read back (whitespace removed: names wrap at slashes)."""
    pypdf = pytest.importorskip("pypdf")
    pdf = _shots_dir(tmp_path) / f"{name}.pdf"
    done = browse(tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", page.as_uri())
    assert done.returncode == 0 and pdf.read_bytes()[:5] == b"%PDF-", done.stderr[-2000:]
    text = "".join(p.extract_text() or "" for p in pypdf.PdfReader(pdf).pages)
    return re.sub(r"\s+", "", text)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("which", ["corpus", "over"])
def test_screenshots_at_two_widths_and_print_show_every_row_and_the_json_figures(which, request, tmp_path):
    path, doc = request.getfixturevalue("corpus_page" if which == "corpus" else "over")
    folder = _shots_dir(tmp_path)
    for width in WIDTHS:
        shot = folder / f"{which}-{width}.png"
        done = browse(tmp_path, "--hide-scrollbars", f"--screenshot={shot}", f"--window-size={width},2400", path.as_uri())
        assert done.returncode == 0, done.stderr[-2000:]
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(data[16:20], "big") == width
        _check_figures(_dom(tmp_path, path, width), doc)
    printed = _printed_text(tmp_path, path, which)
    assert "Needsaction" in printed and f"{_total(doc, 'required'):,}" in printed
    for chunk in doc["sizes"]["chunks"]:  # every row of the scrolled tables is on paper
        assert re.sub(r"\s+", "", chunk["name"]) in printed, chunk["name"]
    last_key = doc["keys"][-1]["hash"][:12]
    assert last_key in printed
