"""``pipeline cook`` and ``pipeline report`` give the same key count for the same world, with the
fallback keys shown apart in both; the change block counts per-chunk uses as such; the HTML
cards show 0, never a dash, for a family without keys; the report's total binary size is the
shipped shader library when the cooked outputs are given (real compiler)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.outputs.manifest import library_path, load_chunk_manifest
from pipeline.outputs.pak import PakReader
from pipeline.report.html import render_html
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"
CORPUS_PART = ("glTF-Asset-Generator/Output/Positive/Material_AlphaBlend",
               "glTF-Asset-Generator/Output/Positive/Instancing",
               "glTF-Asset-Generator/Output/Positive/Animation_Skin",
               "glTF-Sample-Assets/Models/VertexColorTest")


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def cooked(world: Path, tmp: Path) -> dict:
    """The cook's JSON, its summary line (a second, no-op cook), the report as JSON and as a table."""
    common = ("--cache", tmp / "cache")
    dry = json.loads(run("cook", world, *common, "--out", tmp / "out", "--dry-run", "--json"))
    dry_line = run("cook", world, *common, "--out", tmp / "out", "--dry-run", "-q").strip().splitlines()[-1]
    doc = json.loads(run("cook", world, *common, "--out", tmp / "out", "-j", "1", "--json"))
    line = run("cook", world, *common, "--out", tmp / "out", "-j", "1", "-q").strip().splitlines()[-1]
    report = json.loads(run("report", world, *common, "-f", "json"))
    table = run("report", world, *common)
    manifests = [load_chunk_manifest(p) for p in (tmp / "out").rglob("*.json") if ".level." not in p.name]
    return {"cook": doc, "line": line, "report": report, "table": table, "dry": dry, "dry_line": dry_line,
            "manifest_keys": {k for m in manifests for k in m.keys}}


def assert_agree(run_: dict) -> None:
    cook, report = run_["cook"], run_["report"]
    required = sum(r["required"] for r in report["totals"])
    fallbacks = {k["key"] for k in report["fallback_keys"]}
    assert cook["required_keys"] == required == len(report["keys"])
    assert cook["fallback_keys"] == len(fallbacks) > 0
    assert cook["keys"] == required + len(fallbacks)
    # what the cook wrote is exactly the report's required keys and its fallbacks
    assert run_["manifest_keys"] == {k["key"] for k in report["keys"]} | fallbacks
    assert not fallbacks & {k["key"] for k in report["keys"]}
    said = f"-> {required} keys (+{len(fallbacks)} fallback) ->"
    assert said in run_["line"], run_["line"]
    dry = run_["dry"]  # a dry run counts as the cook it stands for
    assert (dry["keys"], dry["required_keys"], dry["fallback_keys"]) == (cook["keys"], required, len(fallbacks))
    assert said in run_["dry_line"], run_["dry_line"]
    assert f"required keys {required} (+{len(fallbacks)} fallback)" in run_["table"]


@pytest.fixture(scope="module")
def corpus_part(corpus, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("part")
    for part in CORPUS_PART:
        shutil.copytree(corpus / part, tmp / "world" / Path(part).name)
    return cooked(tmp / "world", tmp) | {"cache": tmp / "cache", "world": tmp / "world"}


@pytest.mark.slow
def test_cook_and_report_agree_on_the_sample_world(tmp_path):
    assert_agree(cooked(SAMPLE, tmp_path))


def test_cook_and_report_agree_on_part_of_the_corpus(corpus_part):
    assert_agree(corpus_part)


def test_the_change_block_counts_per_chunk_uses_not_keys(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "world")
    result = CliRunner().invoke(main, ["cook", str(tmp_path / "world"), "--cache", str(tmp_path / "cache"),
                                       "--out", str(tmp_path / "out"), "-j", "1", "--color", "never"])
    assert result.exit_code == 0, result.output
    manifests = [load_chunk_manifest(p) for p in (tmp_path / "out").rglob("*.json") if ".level." not in p.name]
    uses, distinct = sum(len(m.keys) for m in manifests), len({k for m in manifests for k in m.keys})
    assert uses > distinct  # some key is in several chunks
    (line,) = [ln for ln in result.output.splitlines() if "key uses" in ln]
    assert line == f"  per-chunk key uses +{uses} -0 ({distinct} distinct keys; {uses} in 8 chunk(s) cooked " \
                   "for the first time)"
    fallback = int(re.search(r"keys \(\+(\d+) fallback\) ->", result.output).group(1))
    assert f"-> {distinct - fallback} keys (+{fallback} fallback) ->" in result.output  # the distinct keys, apart


def cards(html: str) -> dict[str, str]:
    section = re.search(r'<section class="cards">(.*?)</section>', html).group(1)
    return dict(re.findall(r'data-figure="(\w+)"><div class="big">(.*?)</div>', section))


def test_html_cards_show_0_for_a_family_without_keys(corpus_part):
    doc = corpus_part["report"]
    empty = [r for r in doc["totals"] if r["required"] == 0]
    assert empty and doc["cooked"]  # the corpus draws are all pbr: chain and mtlx have no keys
    for row in empty:
        assert row["unique_binaries"] == 0 and row["pso"] == 0
    shown = cards(render_html(doc))
    assert "&ndash;" not in "".join(shown.values()) and "\u2013" not in "".join(shown.values())
    for figure in ("required", "unique_sources", "unique_binaries", "pso"):
        assert shown[figure] == f"{sum(r[figure] for r in doc['totals']):,}"


def test_html_cards_leave_out_what_is_not_cooked(tmp_path):
    doc = json.loads(run("report", SAMPLE, "--cache", tmp_path / "cache", "-f", "json"))
    assert not doc["cooked"]
    shown = cards(render_html(doc))
    assert "&ndash;" not in "".join(shown.values())
    assert "unique_binaries" not in shown and "pso" not in shown
    assert shown["required"] == str(sum(r["required"] for r in doc["totals"]))


def test_the_report_total_is_the_shipped_library_given_the_outputs_else_the_blob_sum(tmp_path, monkeypatch):
    cache, out = tmp_path / "cache", tmp_path / "build"
    run("cook", SAMPLE, "--cache", cache, "--out", out, "-j", "1", "-q")
    library = PakReader(library_path(out))
    indexes = [load_chunk_manifest(p) for p in out.rglob("*.json") if not p.name.endswith(".level.json")]

    def blob_sum(doc: dict, level: str | None = None) -> int:  # the distinct blobs of the required keys
        required = {k["key"] for k in doc["keys"]}
        blobs = {d for m in indexes if level in (None, m.level) for text, e in m.keys.items() if text in required
                 for d in e.stages.values()}
        return sum(len(library.get(d)) for d in blobs)

    shipped = api.report(SAMPLE, cache=cache, out=out).to_json()
    counted = api.report(SAMPLE, cache=cache).to_json()
    assert shipped["sizes"]["total"]["bytes"] == os.path.getsize(out / "shaders.pak")
    assert shipped["sizes"]["total"]["library"] is True
    assert counted["sizes"]["total"]["bytes"] == blob_sum(counted) < os.path.getsize(out / "shaders.pak")
    assert "library" not in counted["sizes"]["total"]
    assert shipped["sizes"]["chunks"] == counted["sizes"]["chunks"]  # a chunk: its distinct blobs either way
    level = api.report(SAMPLE, cache=cache, out=out, level="forest").to_json()  # part of the world: its blobs
    assert level["sizes"]["total"]["bytes"] == blob_sum(level, "forest") and "library" not in level["sizes"]["total"]

    monkeypatch.chdir(tmp_path)  # the command line: --out, else build/ when it exists
    for args in (("--out", out), ()):
        doc = json.loads(run("report", SAMPLE, "--cache", cache, "--json", *args))
        assert doc["sizes"]["total"]["bytes"] == os.path.getsize(out / "shaders.pak")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    doc = json.loads(run("report", SAMPLE, "--cache", cache, "--json"))
    assert doc["sizes"]["total"]["bytes"] == blob_sum(doc)
