"""The HTML report: self-contained, and rendered by a real browser (headless Chromium)."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.report.html import render_html

ROOT = Path(__file__).resolve().parents[1]
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
                                       "--what-if", "NORMAL_MAP=dynamic"])
    assert result.exit_code == 0, result.output
    return out, api.report(SAMPLE, cache=cache).to_json()


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; .ci/run installs it)")
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
    order = re.findall(r'<td>([a-z]+/[a-z0-9]+)</td><td>[a-z]+</td><td class="num" data-v="(\d+)"', body)
    assert [int(v) for _, v in order] == sorted(r["required"] for r in doc["chunks"])


@pytest.mark.browser
def test_chromium_takes_a_screenshot(page, tmp_path):
    shot = tmp_path / "report.png"
    done = browse(tmp_path, f"--screenshot={shot}", "--window-size=1400,2000", page[0].as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
