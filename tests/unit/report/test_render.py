"""report.render: a report document (``Report.to_json()``) as a text table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pipeline.report.render import (
    CSV_COLUMNS,
    TOP_ROWS,
    fallback_note,
    feature_label,
    number,
    render,
    render_csv,
    render_json,
    render_table,
    table,
)


def family(shader: str, pass_name: str, required: int, **extra) -> dict:
    return {"shader": shader, "pass": pass_name, "stages": 2, "possible": 8, "valid": 6, "required": required,
            "unique_sources": required, "unique_binaries": None, "cached": 0, "missing": required, "failed": 0,
            "pso": None, "kind": "ubershader", "materials": None, "graph_shapes": None, **extra}


def area(name: str, required: int, **extra) -> dict:
    return {"name": name, "level": name.split("/")[0], "required": required, "unique": 1, "draws": 2, "files": 1,
            "budget": None, **extra}


def doc(**over) -> dict:
    """A small report document with every section a table reads, as ``Report.to_json()`` writes it."""
    base = {
        "world": "w", "scope": {"level": None, "chunk": None}, "cooked": False, "budgets": [], "errors": [],
        "families": [family("t", "depth", 1), family("t", "forward", 3)], "totals": [family("t", "*", 4)],
        "levels": [area("forest", 4)], "chunks": [area("forest/c1", 3), area("forest/c2", 2)],
        "features": [], "contributors": {"files": [], "materials": []}, "fallback_keys": [],
        "sizes": None, "timings": None, "provenance": {}, "what_if": None, "since": None,
    }
    return {**base, **over}


def section(text: str, title: str) -> list[str]:
    """The lines of the section of ``text`` that starts with ``title``, up to the blank line after it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_numbers_have_thousands_separators_and_unknown_is_a_dash() -> None:
    assert [number(v) for v in (0, 999, 1000, 1234567, -4200)] == ["0", "999", "1,000", "1,234,567", "-4,200"]
    assert number(None) == "-"
    assert number(True) == "True" and number("x/y") == "x/y" and number(1.5) == "1.5"  # no separators but ints


def test_a_table_left_aligns_the_first_column_and_right_aligns_the_rest() -> None:
    lines = table(["name", "n"], [["a", 1234], ["longer", None]])
    assert lines == ["name        n",
                     "------  -----",
                     "a       1,234",
                     "longer      -"]
    assert table(["only", "headers"], []) == ["only  headers", "----  -------"]
    assert table(["a", "b"], [["x", ""]])[2] == "x"  # no trailing spaces


def test_render_picks_the_format_and_a_table_otherwise() -> None:
    d = doc()
    assert render(d, "json") == render_json(d)
    assert render(d, "csv") == render_csv(d)
    assert render(d, "table") == render_table(d) != render_json(d)


def test_json_is_sorted_indented_utf8_and_ends_with_a_newline() -> None:
    d = {"b": [1, {"z": None, "a": "forêt"}], "a": True}
    text = render_json(d)
    assert text == json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "forêt" in text


def test_json_writes_a_count_past_64_bits_exactly_in_the_same_shape() -> None:
    huge = 2 ** 64 * 3 + 1  # 64 independent bool features and more
    d = {"totals": [{"possible": huge, "required": 2}], "world": "forêt"}
    text = render_json(d)
    assert json.loads(text)["totals"][0]["possible"] == huge
    assert str(huge) in text
    small = render_json({**d, "totals": [{"possible": 7, "required": 2}]})
    assert text.replace(str(huge), "7") == small  # layout unchanged by which encoder wrote it


@pytest.mark.parametrize("scope, cooked, title", [
    ({"level": None, "chunk": None}, False, "pipeline report: w (all levels; not cooked: no binary figures)"),
    ({"level": "forest", "chunk": None}, True, "pipeline report: w (level forest; compile figures from the cache)"),
    ({"level": "forest", "chunk": "forest/c1"}, False,
     "pipeline report: w (chunk forest/c1; not cooked: no binary figures)"),
])
def test_the_title_names_the_scope_and_whether_it_was_cooked(scope, cooked, title) -> None:
    assert render_table(doc(scope=scope, cooked=cooked)).splitlines()[0] == title


def test_the_status_puts_budgets_over_and_errors_before_the_figures() -> None:
    budgets = [{"scope": "level", "name": "forest", "required": 4, "budget": 3, "over": True,
                "message": "level forest: 4 required keys exceed the budget of 3 (+1)"},
               {"scope": "chunk", "name": "forest/c1", "required": 3, "budget": 3, "over": False, "message": None}]
    errors = [{"severity": "error"}, {"severity": "warning"}, {"severity": "error"}]
    sizes = {"total": {"blobs": 1200, "bytes": 3456789, "compressed": 1234567}}
    text = render_table(doc(budgets=budgets, errors=errors, sizes=sizes, timings={"seconds": 2.345},
                            fallback_keys=[{"key": "k1"}, {"key": "k2"}]))
    assert text.splitlines()[2:5] == [
        "OVER BUDGET: level forest needs 4 keys, budget 3",
        "2 errors in the content (listed on stderr)",  # warnings are not counted
        "required keys 4 (+2 fallback); 1,200 binaries, 3,456,789 bytes (1,234,567 compressed); compile time 2.35 s"]
    assert section(text, "Budgets") == ["Budgets", "OVER  " + budgets[0]["message"],
                                        "ok    chunk forest/c1: 3 of 3 keys"]
    assert "1 error in the content" in render_table(doc(errors=errors[:1]))


def test_the_funnel_names_families_by_pass_then_all_passes() -> None:
    rows = section(render_table(doc()), "Funnel")
    assert [r.split("  ")[0] for r in rows[3:]] == ["t/depth", "t/forward", "t (all passes)"]
    # possible, valid, required, sources, binaries (not cooked: unknown), cached, missing, pso (unknown)
    assert rows[-1].split()[3:] == ["8", "6", "4", "4", "-", "0", "4", "-"]


def test_chunks_are_ranked_by_required_keys_and_cut_at_the_top_rows() -> None:
    chunks = [area(f"l/c{i:02}", i % 4) for i in range(TOP_ROWS + 3)]
    lines = section(render_table(doc(chunks=chunks)), "Chunks")
    shown = [line.split()[0] for line in lines[3:-1]]
    ranked = sorted(chunks, key=lambda r: (-r["required"], r["name"]))
    assert shown == [r["name"] for r in ranked[:TOP_ROWS]]
    assert lines[-1] == "(3 more chunks in --format json/csv/html)"
    assert "more chunks" not in render_table(doc())


def test_sections_with_nothing_to_act_on_are_left_out() -> None:
    features = [{"shader": "t", "feature": "A", "values_used": 2, "required": 4, "if_dynamic": 4, "saved": 0}]
    files = [{"file": "a.gltf", "material": None, "keys": 2, "only_here": 0, "draws": 1}]
    text = render_table(doc(features=features, contributors={"files": files, "materials": []}))
    for title in ("Budgets", "Since", "What if", "Generated families", "Features", "Files", "Materials"):
        assert f"\n{title}" not in text
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_features_are_labelled_by_name_or_family_and_feature() -> None:
    assert feature_label({"name": "t.A", "shader": "x", "feature": "y"}) == "t.A"
    assert feature_label({"shader": "t", "feature": "B"}) == "t.B"  # a report saved before rows had a name
    rows = [{"shader": "t", "feature": "B", "values_used": 2, "required": 4, "if_dynamic": 1, "saved": 3}]
    assert section(render_table(doc(features=rows)), "Features")[3].split() == ["t.B", "2", "4", "1", "3"]


def test_what_if_and_since_show_their_changes() -> None:
    what_if = {"overrides": {"t.A": "dynamic"}, "families": [
        {"shader": "t", "pass": "forward", "today": {"possible": 8, "valid": 6, "required": 3},
         "what_if": {"possible": 4, "valid": 3, "required": 2}}]}
    since = {"old": "old.json", "added": [{"key": "t/f{A=1}"}], "removed": [],
             "files": [{"file": "a.gltf", "added": 1, "removed": 0}]}
    text = render_table(doc(what_if=what_if, since=since))
    assert section(text, "What if")[0] == "What if t.A=dynamic (today, then what-if)"
    assert section(text, "What if")[3].split() == ["t/forward", "8", "4", "6", "3", "3", "2", "-1"]
    assert section(text, "Since") == ["Since old.json: 1 keys added, 0 removed", "  + t/f{A=1}"]
    assert fallback_note(doc()) == "" and fallback_note(doc(fallback_keys=[{}] * 1200)) == " (+1,200 fallback)"


def test_csv_is_one_table_of_families_levels_and_chunks() -> None:
    d = doc()
    rows = list(csv.DictReader(io.StringIO(render_csv(d))))
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert [(r["table"], r["name"]) for r in rows] == [
        ("family", "t/depth"), ("family", "t/forward"), ("family", "t/*"),
        ("level", "forest"), ("chunk", "forest/c1"), ("chunk", "forest/c2")]
    assert rows[1]["required"] == "3" and rows[1]["unique_binaries"] == "" and rows[3]["level"] == "forest"
    assert "stages" not in rows[0] and "kind" not in rows[0]  # fields outside the columns are left out
