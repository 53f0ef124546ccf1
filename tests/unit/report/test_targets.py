"""The report per compile target: funnel, sizes and failures of each target label, and the platforms that ship it."""

from __future__ import annotations

from pathlib import Path

import pytest
from family_worlds import triangle_world
from target_helpers import MATERIALS, TARGETS_DATA

from pipeline import api
from pipeline.outputs import manifest as mf
from pipeline.outputs.pak import PakReader
from pipeline.report.html import render_html
from pipeline.report.render import render_table
from pipeline.report.targets import key_targets

PLAIN = [({"name": "plain"}, ()), ({"name": "colored"}, ("COLOR_0",))]
TEXTURED = ({"name": "textured", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}, ("TEXCOORD_0",))
MATRIX = ('[platforms.desktop]\ntargets = ["vulkan1.2"]\n[platforms.apple]\ntargets = ["metal"]\n'
          '[platforms.web]\ntargets = ["webgl2", "webgpu"]\n')
LABELS = {"vulkan1.2-relaxed": ("desktop",), "metal-relaxed-msl2.1": ("apple",), "webgl2": ("web",),
          "webgpu-relaxed": ("web",)}


@pytest.fixture(scope="module")
def cooked(tmp_path_factory):
    """The portable family (its own compile: options) cooked through the matrix; webgpu cannot express its
    textured key (a combined image sampler), every other target can."""
    tmp = tmp_path_factory.mktemp("matrix")
    world = triangle_world(tmp / "world", TARGETS_DATA / "rules", MATERIALS, [*PLAIN, TEXTURED], MATRIX)
    result = api.cook(world, cache=tmp / "cache", out=tmp / "out", jobs=1)
    report = api.report(world, cache=tmp / "cache", explain_keys=0)
    return result, report.to_json(), tmp / "out"


def test_each_target_has_its_funnel_sizes_and_platforms(cooked) -> None:
    result, doc, out = cooked
    assert len(result.errors) == 1  # the textured key's fragment stage, for webgpu alone
    rows = {(r["target"], r["family"]): r for r in doc["targets"]}
    assert sorted(rows) == sorted([(label, f) for label in LABELS for f in ("portable", "*")])
    manifest = mf.load_chunk_manifest(out / "level" / "props.json")
    pak = PakReader(mf.library_path(out))
    funnel = next(r for r in doc["totals"] if r["shader"] == "portable")
    for label, platforms in LABELS.items():
        row = rows[(label, "portable")]
        blobs = {d for e in manifest.keys.values() for d in (e.targets[label] or {}).values()}
        assert row["platforms"] == list(platforms) and row["required"] == len(manifest.keys) == 3
        assert (row["possible"], row["valid"]) == (funnel["possible"], funnel["valid"])
        assert row["binaries"] == len(blobs) and row["bytes"] == sum(len(pak.get(d)) for d in blobs)
        assert 0 < row["compressed"] and row["cached"] + row["failed"] == row["jobs"]
        assert rows[(label, "*")] | {"family": "portable"} == row
    assert [(r["failed"], r["status"]) for r in (rows[("webgpu-relaxed", "portable")],)] == [(1, "failed")]
    assert {rows[(label, "portable")]["status"] for label in LABELS if label != "webgpu-relaxed"} == {"ok"}


def test_the_text_and_html_reports_show_the_targets(cooked) -> None:
    _, doc, _ = cooked
    text = render_table(doc)
    assert "Per target: possible -> valid -> required -> jobs, binaries and bytes" in text
    line = next(x for x in text.splitlines() if x.startswith("webgpu-relaxed") and " portable " in x)
    assert line.split()[2] == "web" and line.split()[-2:] == ["1", "failed"]
    assert 'id="targets"' in render_html(doc) and "Per compile target" in render_html(doc)


def test_one_default_target_adds_no_table(tmp_path: Path) -> None:
    world = triangle_world(tmp_path / "world", TARGETS_DATA / "rules", MATERIALS, PLAIN[:1],
                           '[cook.compile]\nportable = ["vulkan1.2"]\n')
    doc = api.report(world, cache=tmp_path / "cache", explain_keys=0).to_json()  # not cooked
    assert [(r["target"], r["family"], r["jobs"], r["status"]) for r in doc["targets"]] == \
        [("vulkan1.2", "portable", 2, "not cooked"), ("vulkan1.2", "*", 2, "not cooked")]
    assert "Per target" not in render_table(doc)


def test_a_family_naming_no_target_is_counted_under_the_default_one() -> None:
    from pipeline.plan.jobs import JobPlan

    plan = JobPlan(stages={"k": {"vertex": "a"}, "none": {}}, targets={"t": {"webgl2": {"vertex": "b"}}})
    assert key_targets(plan, "k", "vulkan1.2") == {"vulkan1.2": {"vertex": "a"}}
    assert key_targets(plan, "t", "vulkan1.2") == {"webgl2": {"vertex": "b"}}
    assert key_targets(plan, "none", "vulkan1.2") == {}  # a family no cooked platform includes


def test_a_family_with_an_open_count_makes_the_target_total_open():
    from pipeline.report import targets
    assert targets._total([3, 4]) == 7
    assert targets._total([3, "open", 4]) == "open"
