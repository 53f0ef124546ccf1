"""The feature names ``pipeline report`` prints (table, JSON, HTML, the budget line) are
``family.FEATURE``, and each one pasted back into ``--what-if`` changes that family only."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from pipeline import api
from pipeline.cli import main
from pipeline.report.errors import ReportError
from pipeline.report.html import render_html
from pipeline.report.whatif import resolve_overrides
from paths import REPO

SAMPLE = REPO / "examples" / "sample_world"


def cli(*args):
    return CliRunner().invoke(main, ["report", str(SAMPLE), *map(str, args)])


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """The sample world's report as a table and as JSON, and the families' feature owners."""
    cache = tmp_path_factory.mktemp("names") / "cache"
    table = cli("--cache", cache)
    doc = cli("--cache", cache, "-f", "json")
    assert table.exit_code == 0 and doc.exit_code == 0, table.output + doc.output
    owners: dict[str, set[str]] = {}
    for shader, rs in api.open_world(SAMPLE).families.items():
        for feature in rs.compiled.domains:
            owners.setdefault(feature, set()).add(shader)
    return {"cache": cache, "table": table.stdout, "doc": json.loads(doc.stdout), "owners": owners}


def table_features(text: str) -> list[str]:
    """The first column of the table's feature section, as printed."""
    lines = text.split("Features that multiply the required keys most\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line.split()[0] for line in lines[2:]]


def what_if(printed, name: str) -> dict:
    result = cli("--cache", printed["cache"], "-f", "json", "--what-if", f"{name}=dynamic")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["what_if"]


def assert_only_family_changes(what: dict, family: str) -> None:
    mine = [r for r in what["families"] if r["shader"] == family]
    others = [r for r in what["families"] if r["shader"] != family]
    assert mine and others
    assert all(r["what_if"] == r["today"] for r in others)
    assert sum(r["what_if"]["required"] for r in mine) < sum(r["today"]["required"] for r in mine)


def test_a_name_copied_from_the_table_changes_that_family_only(printed):
    names = table_features(printed["table"])
    assert names and all(re.fullmatch(r"[a-z][a-z0-9_]*\.[A-Z][A-Z0-9_]*", n) for n in names)
    # a feature several families have: the name picks one of them
    shared = next(n for n in names if len(printed["owners"][n.split(".")[1]]) > 1)
    what = what_if(printed, shared)
    assert what["overrides"] == {shared: "dynamic"}
    assert_only_family_changes(what, shared.split(".")[0])


def test_a_name_copied_from_the_json_changes_that_family_only(printed):
    rows = [r for r in printed["doc"]["features"] if r["saved"] > 0]
    assert all(r["name"] == f"{r['shader']}.{r['feature']}" for r in printed["doc"]["features"])
    row = next(r for r in rows if r["shader"] != "pbr")  # not the family a bare name would have found
    what = what_if(printed, row["name"])
    assert what["overrides"] == {row["name"]: "dynamic"}
    assert_only_family_changes(what, row["shader"])
    (mine,) = [r for r in what["families"] if r["shader"] == row["shader"]]
    assert mine["what_if"]["required"] == row["if_dynamic"]  # the feature row's figure, recomputed


def test_the_budget_line_names_features_that_what_if_takes(printed):
    total = sum(r["required"] for r in printed["doc"]["totals"])
    over = cli("--cache", printed["cache"], "--budget", total - 1)
    assert over.exit_code == 1
    line = next(ln for ln in over.stderr.splitlines() if "budget" in ln)
    named = re.search(r"making these features dynamic would save: ([\w.]+) \(-(\d+)\)", line)
    assert named, line
    what = what_if(printed, named.group(1))
    assert_only_family_changes(what, named.group(1).split(".")[0])


def test_a_bare_name_one_family_has_is_that_family(printed):
    feature = next(f for f, shaders in printed["owners"].items() if shaders == {"pbr"} and f == "INSTANCING")
    assert what_if(printed, feature) == what_if(printed, f"pbr.{feature}")


def test_html_names_features_as_family_feature(printed):
    html = render_html(printed["doc"])
    for row in (r for r in printed["doc"]["features"] if r["saved"] > 0):
        assert f"<td>{row['name']}</td>" in html or f">{row['name']}<" in html
        assert f"<title>{row['feature']}:" not in html


def test_an_ambiguous_bare_name_is_one_located_line_naming_the_families(printed):
    result = cli("--cache", printed["cache"], "--what-if", "NORMAL_MAP=dynamic")
    assert result.exit_code == 1
    (line,) = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert line == ("--what-if: error: NORMAL_MAP=dynamic: 2 families have a feature NORMAL_MAP (mtlx, pbr): "
                    "name one, as mtlx.NORMAL_MAP or pbr.NORMAL_MAP")


@pytest.mark.parametrize(("given", "message"), [
    ({"pbx.INSTANCING": "dynamic"}, "pbx.INSTANCING=dynamic: no family 'pbx' (did you mean 'pbr'?)"),
    ({"pbr.INSTANCNG": "dynamic"},
     "pbr.INSTANCNG=dynamic: family pbr has no feature 'INSTANCNG' (did you mean 'pbr.INSTANCING'?)"),
    ({"chain.INSTANCING": "removed"}, "chain.INSTANCING=removed: family chain has no feature 'INSTANCING' (did you mean "
                                      "'pbr.INSTANCING'?)"),
    ({"INSTANCNG": "dynamic"}, "INSTANCNG=dynamic: no family has a feature 'INSTANCNG' (did you mean "
                               "'pbr.INSTANCING'?)"),
    ({"INSTANCING": "dynamic", "pbr.INSTANCING": "removed"},
     "pbr.INSTANCING=removed: pbr.INSTANCING is also given as INSTANCING=dynamic"),
])
def test_unknown_names_say_what_was_meant(given, message):
    with pytest.raises(ReportError) as caught:
        resolve_overrides(api.open_world(SAMPLE).families, given)
    (diagnostic,) = caught.value.diagnostics
    assert str(diagnostic.location) == "what_if" and diagnostic.message == message


def test_names_resolve_to_family_feature():
    families = api.open_world(SAMPLE).families
    assert resolve_overrides(families, {"INSTANCING": "dynamic", "mtlx.NORMAL_MAP": "removed",
                                        "pbr.INSTANCING": "dynamic"}) == \
        {"pbr.INSTANCING": "dynamic", "mtlx.NORMAL_MAP": "removed"}
